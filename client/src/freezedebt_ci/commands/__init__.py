"""The ``freezedebt-ci`` commands, one module each, its arguments beside its handler.

Exit statuses: 0 pass or done, 1 block, 2 usage, input, rejected or transport error, 3 still
pending when ``--wait`` ran out (:mod:`freezedebt_ci.exits`).
"""
