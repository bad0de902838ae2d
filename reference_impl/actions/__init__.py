"""Actions, one module each, registered by name as upstream's actions/factory.go does."""

from reference_impl.actions.allocate import Allocate
from reference_impl.actions.backfill import Backfill
from reference_impl.actions.base import register_action
from reference_impl.actions.enqueue import Enqueue

for _cls in (Enqueue, Allocate, Backfill):
    register_action(_cls)
