"""Deleting runs waits for their ingest.

A run's results have no foreign key in the database (``TestResult``), so nothing there stops a
run from being deleted while its ingest is storing results: Django's cascade would delete the
results it sees, wait on the ingest's row lock to delete the run, and leave behind the results
the ingest then commits. Locking each run before anything of it is deleted closes that gap:
the deletion waits for the ingest's commit and then sees every result, or the ingest waits for
the deletion and finds its run gone. Deletions of every kind send ``pre_delete`` before the
cascade deletes a row (the admin, querysets, a repository's cascade).
"""

from django.db.models.signals import pre_delete
from django.dispatch import receiver

from evidence.models import Run


@receiver(pre_delete, sender=Run, dispatch_uid="evidence.lock_run_before_delete")
def lock_run_before_delete(sender, instance: Run, using: str, **kwargs) -> None:
    # Django's deletion runs in a transaction: the lock lasts until the run is gone.
    Run.objects.using(using).select_for_update().filter(pk=instance.pk).values_list("pk").first()
