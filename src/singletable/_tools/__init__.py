"""The tools around the library: the ``singletable`` command line (``cli``), the model checks
(``lint``), the layout view (``layout``, ``layout_html``) and the demo with its packaged shop
(``demo``, ``demo_shop``).

Nothing here is imported by the library itself: ``import singletable`` never pays for it.
"""
