"""Access patterns as pure plans: each compiles call keywords to its request, and decodes the
response, without sending anything (the repositories send; see :mod:`singletable._flows`).

``declare`` holds the declaration functions (``get``, ``query``, ``collection``); one module per
pattern kind holds its plan (``get``, ``query``, ``collection``, ``scatter``, ``propagate``),
``keyed`` the key conditions they share, ``base`` the descriptor base and the decoder, and
``bound`` the typed call surface of each twin.
"""
