"""Hypothesis strategies that generate scenario documents (../shared/spec/scenario-format.md).

- `schedcheck.generators.quantities`: Kubernetes quantity strings (cpu, memory, GPUs, node shapes) and
  exact arithmetic on them.
- one module per kind of object, each a few strategies: `vocabulary` (label keys, names, taints, pod
  states, the base time), `nodes`, `queues` (queues, queue trees, priority classes), `jobs` (a
  PodGroup and its pods, placed consistently on the nodes; fillers and system pods), `ledger` (what
  each node has left, and whether a pod may sit there), `quotas` (ResourceQuotas).
- `schedcheck.generators.confs`: volcano-scheduler.conf documents drawn from realistic action orders,
  tier sets, flags and plugin arguments.
- `schedcheck.generators.scenarios`: `scenarios(...)`, the whole scenario, and `scenario_profiles`
  ("ci", "nightly"); `sample_documents` draws seeded examples outside a test.
- `schedcheck.generators.consistency`: `cluster_problems(doc)`, whether a document is a state a real
  cluster could be in.

Every strategy emits plain documents, so each generated case can be saved as YAML
(`schedcheck.generators.scenarios.to_yaml`), read back by the loader and replayed.
"""
