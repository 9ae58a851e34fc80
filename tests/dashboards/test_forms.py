"""The inline widget renderer writes what Django's widget templates write."""

from __future__ import annotations

import pytest
from django import forms
from django.forms.renderers import DjangoTemplates

from dashboards.forms import InlineWidgetRenderer
from dashboards.views.repository import PolicyForm


class Sample(forms.Form):
    count = forms.IntegerField(min_value=1, max_value=365, help_text="How many <b>days</b>.")
    offset = forms.IntegerField(min_value=0, required=False)  # an attribute whose value is 0
    name = forms.CharField(max_length=20, required=False)
    notes = forms.CharField(widget=forms.Textarea(attrs={"rows": 4, "cols": 50}), required=False)
    mail = forms.EmailField(disabled=True)
    secret = forms.CharField(widget=forms.PasswordInput)
    token = forms.CharField(widget=forms.HiddenInput)
    choice = forms.ChoiceField(choices=[("a", "A & B"), ("b", "<b>")])
    agree = forms.BooleanField(required=False)
    flags = forms.MultipleChoiceField(choices=[("x", "X")], widget=forms.CheckboxSelectMultiple)


def rendered(form: forms.Form, renderer) -> dict[str, str]:
    form.renderer = renderer
    return {name: str(form[name]) for name in form.fields}


@pytest.mark.parametrize(
    "data",
    [
        None,  # unbound: initial values
        {"count": "0", "name": 'a "quoted" <name>', "notes": "line\n</textarea><script>"},
        {"count": "12", "name": "", "notes": "", "secret": "x", "token": "t&t", "agree": "on"},
    ],
)
def test_every_widget_renders_as_with_djangos_templates(data):
    initial = {"count": 7, "notes": "one\ntwo & three", "mail": "a@example.com", "token": "<t>"}
    ours = rendered(Sample(data, initial=initial), InlineWidgetRenderer())
    django = rendered(Sample(data, initial=initial), DjangoTemplates())
    assert ours == django
    # Inputs and text areas are written in Python, and are what a browser needs.
    assert ours["count"].startswith('<input type="number" name="count"')
    assert "</textarea><script>" not in ours["notes"]


def test_the_policy_form_renders_as_with_djangos_templates():
    initial = PolicyForm.initial_from(
        {"max_freeze_days": 14, "fixture_paths": ["tests/fixtures/**"], "ledger_path": "l.toml"},
        {"lost-tests": "warn"},
    )
    invalid = {"max_freeze_days": "900", "fixture_paths": "<x>", "ledger_path": ""}
    for form_args in ({"initial": initial}, {"data": invalid}):
        ours = PolicyForm(**form_args)
        assert rendered(ours, InlineWidgetRenderer()) == rendered(
            PolicyForm(**form_args), DjangoTemplates()
        )
