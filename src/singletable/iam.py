"""A least-privilege IAM policy for a repository, from its model (the same policy as
``singletable schema app:Shop --format iam``): ``iam_policy(Shop, account=..., region=...)``
allows exactly the DynamoDB actions the repository's patterns and verbs send, on the table and
index ARNs they send them to. See the production guide for every keyword.
"""

from __future__ import annotations

from ._tools.iam import VERB_ACTIONS, iam_policy, pattern_grants, policy_grants

__all__ = ["VERB_ACTIONS", "iam_policy", "pattern_grants", "policy_grants"]
