import datetime

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from dashboards.snapshots import snapshots_backfill


def _day(value: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(value)
    except ValueError:
        raise CommandError(f"--date takes a date as YYYY-MM-DD, not {value!r}.") from None


def _days(value: str) -> int:
    try:
        days = int(value)
    except ValueError:
        days = 0
    if days < 1:
        raise CommandError(f"--backfill takes a whole number of days from 1, not {value!r}.")
    return days


class Command(BaseCommand):
    help = (
        "Snapshot the debt of every repository on DATE (default today), or on the DAYS days "
        "ending with it, from the ledger versions, runs and reports stored by then. "
        "Safe to run again: a day taken twice keeps one row with the same figures."
    )

    def add_arguments(self, parser):
        parser.add_argument("--date", metavar="DATE", help="The day to snapshot (YYYY-MM-DD).")
        parser.add_argument(
            "--backfill", metavar="DAYS", help="Snapshot the DAYS days ending with DATE."
        )

    def handle(self, *args, date, backfill, **options):
        day = _day(date) if date else timezone.localdate()
        days = _days(backfill) if backfill else 1
        written = snapshots_backfill(day=day, days=days)
        first = day - datetime.timedelta(days=days - 1)
        span = f"{day}" if days == 1 else f"{first} to {day}"
        self.stdout.write(f"Wrote {written} debt snapshot(s) for {span}.")
