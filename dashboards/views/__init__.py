"""The dashboard pages of section 9: overview, repository, patch report and freeze.

Views only parse the request, call the selectors (which already limit every read to what the
user may see and raise Http404 otherwise) and the pure chart functions, and render. Charts reach
the browser as data through ``json_script``; every chart has a table of its numbers on the page
and a CSV export at a URL that carries the same filters.
"""

from dashboards.views.freeze import freeze
from dashboards.views.overview import export, index
from dashboards.views.patch import patch
from dashboards.views.repository import policy_edit, repository, repository_export

__all__ = ["export", "freeze", "index", "patch", "policy_edit", "repository", "repository_export"]
