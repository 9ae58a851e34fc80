from django.core.management.base import BaseCommand

from evidence.demo import DEMO_PASSWORD, DEMO_USER, demo_load


class Command(BaseCommand):
    help = "Load demo repositories, evidence, patches and ledgers (once; again is a no-op)."

    def handle(self, *args, **options):
        if demo_load(stdout=self.stdout):
            self.stdout.write(f"Demo loaded. Sign in as {DEMO_USER} / {DEMO_PASSWORD}.")
        else:
            self.stdout.write("Demo data is already loaded.")
