"""The pages of section 8: the owner directory, which leads manage, and the pages behind the
signed links of the reminder e-mails.

Nobody logs in to follow a link: the signed link is the credential. GET only shows the freeze
and a confirm button, because mail scanners and link previews follow every link in an e-mail;
only the confirming POST, with its CSRF token, records anything.
"""

from collections import Counter
from collections.abc import Callable
from functools import wraps
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from dashboards.live import refresh_later
from evidence import visibility
from evidence.teams import is_lead
from ledger.links import ActionLink, LinkError, LinkUsed, link_freeze, link_read
from ledger.models import Freeze, FreezeAction, Owner
from ledger.owners import owners_resolve


class RenewalForm(forms.Form):
    new_reason = forms.CharField(
        label="New reason",
        widget=forms.Textarea(attrs={"rows": 4, "cols": 60}),
        max_length=2000,
        help_text="Why the test must stay frozen longer. It must differ from the current reason.",
    )

    def __init__(self, *args: Any, freeze: Freeze, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.freeze = freeze

    def clean_new_reason(self) -> str:
        reason = self.cleaned_data["new_reason"].strip()
        # A renewal that repeats its reason is the silent renewal the ledger flags.
        if " ".join(reason.split()).casefold() == " ".join(self.freeze.reason.split()).casefold():
            raise forms.ValidationError(
                "This is the current reason. Say what changed, or why more time is needed."
            )
        return reason


# Status codes: the link is wrong (400), its time is over (410), or it did its work (409).
LINK_ERROR_STATUS = {"malformed": 400, "tampered": 400, "expired": 410, "stale": 410, "used": 409}


def _link_error(request: HttpRequest, error: LinkError) -> HttpResponse:
    return render(
        request,
        "ledger/action_link_error.html",
        {"kind": error.kind},
        status=LINK_ERROR_STATUS.get(error.kind, 400),
    )


def _confirm(
    request: HttpRequest, link: ActionLink, freeze: Freeze, form: RenewalForm | None, status: int
) -> HttpResponse:
    context = {
        "link": link,
        "freeze": freeze,
        "action": FreezeAction.Action(link.action),
        "form": form,
        "history": freeze.actions.filter(freeze_version=freeze.version)[:10],
    }
    return render(request, "ledger/action_confirm.html", context, status=status)


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def freeze_action(request: HttpRequest, token: str) -> HttpResponse:
    try:
        link = link_read(token)
        if request.method != "POST":
            freeze = link_freeze(link)
            form = RenewalForm(freeze=freeze) if link.action == "renewal" else None
            return _confirm(request, link, freeze, form, status=200)
        with transaction.atomic():
            # Locked, so a ledger sync renewing the freeze meanwhile cannot slip in between the
            # version check and the insert.
            freeze = link_freeze(link, for_update=True)
            form = None
            new_reason = ""
            if link.action == "renewal":
                form = RenewalForm(request.POST, freeze=freeze)
                if not form.is_valid():
                    return _confirm(request, link, freeze, form, status=400)
                new_reason = form.cleaned_data["new_reason"]
            try:
                with transaction.atomic():
                    action = FreezeAction.objects.create(
                        freeze=freeze,
                        freeze_version=link.freeze_version,
                        owner_email=link.owner_email,
                        action=link.action,
                        new_reason=new_reason,
                        nonce=link.nonce,
                    )
                refresh_later(freeze.repository_id)  # today's unacknowledged freezes
            except IntegrityError:
                # The same link confirmed twice at once: the other request recorded it.
                raise LinkUsed(link) from None
    except LinkError as error:
        return _link_error(request, error)
    return render(request, "ledger/action_done.html", {"freeze": freeze, "action": action})


# --- The owner directory ------------------------------------------------------------------


def lead_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Leads (staff and team members) manage the directory."""

    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if not is_lead(request.user):
            raise PermissionDenied("Only leads manage the owner directory.")
        return view(request, *args, **kwargs)

    return wrapper


def _foreign_handles(user) -> set[str]:
    """Owner handles used by current freezes of repositories the user does not lead.

    A lead manages the directory entries of their own repositories' handles (and of handles no
    ledger uses yet); an entry another team's freezes resolve through decides where that
    team's reminders, and their signed links, go, so it is not theirs to change.
    """
    if user.is_staff:
        return set()
    visible = visibility.repositories(user)
    return set(
        Freeze.objects.current().exclude(repository__in=visible).values_list("owner", flat=True)
    )


def _managed_owner(pk: int, foreign: set[str]) -> Owner:
    """The directory entry, unless its handle is one of ``foreign`` (:func:`_foreign_handles`);
    404 otherwise, as for repositories."""
    owner = get_object_or_404(Owner, pk=pk)
    if owner.handle in foreign:
        raise Http404("No such owner.")
    return owner


class OwnerForm(forms.ModelForm):
    class Meta:
        model = Owner
        fields = ["handle", "name", "email", "is_team"]
        labels = {"is_team": "This is a team (a shared address), not a person"}
        help_texts = {
            "handle": "Exactly as the ledger's owner field spells it.",
            "email": "Where the reminders for this owner go.",
        }

    def __init__(self, *args: Any, foreign: set[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.foreign = foreign

    def clean_handle(self) -> str:
        handle = self.cleaned_data["handle"].strip()
        if handle in self.foreign:
            raise forms.ValidationError(
                "Freezes of repositories you do not lead use this handle; an administrator, "
                "or a lead of those repositories, manages its entry."
            )
        return handle


def _unowned_handles(user) -> list[tuple[str, int]]:
    """Handles of the user's repositories' current freezes that name nobody, with how many
    freezes each holds."""
    freezes = visibility.rows(Freeze.objects.current(), user)
    handles = Counter(freezes.values_list("owner", flat=True))
    resolved = owners_resolve(handles)
    return sorted((handle, count) for handle, count in handles.items() if handle not in resolved)


@require_GET
@lead_required
def owner_list(request: HttpRequest) -> HttpResponse:
    foreign = _foreign_handles(request.user)
    context = {
        "owners": Owner.objects.exclude(handle__in=foreign).order_by("handle"),
        "unowned": _unowned_handles(request.user),
        "form": OwnerForm(foreign=foreign),
    }
    return render(request, "ledger/owner_list.html", context)


@require_http_methods(["GET", "HEAD", "POST"])
@lead_required
def owner_create(request: HttpRequest) -> HttpResponse:
    foreign = _foreign_handles(request.user)
    if request.method == "POST":
        form = OwnerForm(request.POST, foreign=foreign)
        if form.is_valid():
            form.save()
            return redirect("ledger:owner-list")
    else:
        form = OwnerForm(initial={"handle": request.GET.get("handle", "")}, foreign=foreign)
    return render(request, "ledger/owner_form.html", {"form": form, "owner": None})


@require_http_methods(["GET", "HEAD", "POST"])
@lead_required
def owner_update(request: HttpRequest, pk: int) -> HttpResponse:
    foreign = _foreign_handles(request.user)
    owner = _managed_owner(pk, foreign)
    form = OwnerForm(
        request.POST if request.method == "POST" else None, instance=owner, foreign=foreign
    )
    if request.method == "POST" and form.is_valid():
        form.save()
        return redirect("ledger:owner-list")
    return render(request, "ledger/owner_form.html", {"form": form, "owner": owner})


@require_POST
@lead_required
def owner_delete(request: HttpRequest, pk: int) -> HttpResponse:
    _managed_owner(pk, _foreign_handles(request.user)).delete()
    return redirect("ledger:owner-list")
