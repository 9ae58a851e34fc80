from django.core.management.base import BaseCommand, CommandError

from evidence.retention import results_prune


def _days(value: str) -> int:
    try:
        days = int(value)
    except ValueError:
        days = 0
    if days < 1:
        raise CommandError(f"--older-than takes a whole number of days from 1, not {value!r}.")
    return days


class Command(BaseCommand):
    help = (
        "Delete the rows of results (those of the tests ledgers freeze or froze) of runs older "
        "than DAYS, except runs that patches of the last DAYS use as base or head. Runs, their "
        "counts, packed outcomes and uploads are kept."
    )

    def add_arguments(self, parser):
        parser.add_argument("--older-than", required=True, metavar="DAYS", type=str)

    def handle(self, *args, older_than, **options):
        summary = results_prune(older_than_days=_days(older_than))
        cutoff = summary.cutoff.strftime("%Y-%m-%d %H:%M %Z")
        self.stdout.write(
            f"Removed {summary.results} result(s) of {summary.runs} run(s) created before {cutoff}."
        )
        if summary.kept_runs:
            self.stdout.write(
                f"Kept the results of {summary.kept_runs} older run(s) that patches of the "
                f"last {older_than} day(s) use."
            )
        self.stdout.write("Runs, their counts, packed outcomes and stored uploads are kept.")
