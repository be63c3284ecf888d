"""Access patterns as pure plans: each compiles call keywords to its request, and decodes the
response, without sending anything (the repositories send; see :mod:`singletable.flows`).

``base`` (the explain row, the read context, the one decode loop), ``keyed`` (key
conditions), ``get``, ``query``, ``collection``, and
``bound`` (the typed call surface of the sync and async twins). The public factories are in
:mod:`singletable.patterns`.
"""
