import datetime

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from ledger.reminders import ReminderDeliveryFailed, ReminderRun, reminders_send


def _day(value: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(value)
    except ValueError:
        raise CommandError(f"--today takes a date as YYYY-MM-DD, not {value!r}.") from None


class Command(BaseCommand):
    help = (
        "E-mail the owner reminders (7, 3 and 1 days before expiry, on the day, daily after) "
        "and the lead digests due today that were not sent yet. Safe to run again."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--today", metavar="DATE", help="Act as if today were DATE (YYYY-MM-DD)."
        )

    def handle(self, *args, today, **options):
        day = _day(today) if today else timezone.localdate()
        try:
            run = reminders_send(today=day)
        except ReminderDeliveryFailed as error:
            self._summary(error.run)
            raise CommandError(f"{error} Run the command again to retry them.") from error
        self._summary(run)

    def _summary(self, run: ReminderRun) -> None:
        self.stdout.write(
            f"{run.today}: sent {run.reminders_sent} reminder(s) and {run.digests_sent} "
            f"digest(s); {run.already_claimed} already sent or being sent; "
            f"{run.unowned} unowned freeze(s) due, listed in the digest."
        )
