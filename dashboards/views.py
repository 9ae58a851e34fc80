from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from evidence.models import Repository


@require_GET
@login_required
def index(request: HttpRequest) -> HttpResponse:
    repositories = Repository.objects.visible_to(request.user).order_by("slug")
    return render(request, "dashboards/index.html", {"repositories": repositories})
