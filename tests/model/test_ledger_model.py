"""The ledger transition functions agree with NodeInfo on every status, and its identities hold."""

from hypothesis import given, settings
from hypothesis import strategies as st

from schedcheck.model import ledger as L
from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import ALL_STATUSES, TaskStatus
from tests.builders import node, pod

STATUSES = st.sampled_from(ALL_STATUSES)
TASKS = st.lists(st.tuples(st.integers(0, 3000), STATUSES), min_size=1, max_size=6)


def _task(i: int, milli: int, status: TaskStatus) -> TaskInfo:
    t = TaskInfo(pod(f"t{i}", cpu=f"{milli}m" if milli else "", memory="1Gi"))
    t.status = status
    return t


@settings(max_examples=150, deadline=None, derandomize=True)
@given(TASKS, st.data())
def test_transitions_agree_with_node_info(tasks, data):
    n = NodeInfo(node("n1", cpu="4"))
    model = L.from_node(n)
    live = []
    for i, (milli, status) in enumerate(tasks):
        t = _task(i, milli, status)
        if status == TaskStatus.Binding and not t.resreq.less_equal_with_resources_name(n.idle, 0)[0]:
            continue  # the room check refuses; nothing changes
        n.add_task(t)
        model = L.add_task(model, (t.resreq.milli_cpu, t.resreq.memory), status)
        live.append(t)
        assert model == L.from_node(n)
    for t in data.draw(st.permutations(live)):
        new = data.draw(STATUSES)
        req = (t.resreq.milli_cpu, t.resreq.memory)
        if data.draw(st.booleans()):
            old = n.tasks[t.key].status
            t.status = new
            if new == TaskStatus.Binding and not t.resreq.less_equal_with_resources_name(
                    L_idle_after_remove(n, t), 0)[0]:
                continue
            n.update_task(t)
            model = L.update_task(model, req, old, new)
        else:
            model = L.remove_task(model, req, n.tasks[t.key].status)
            n.remove_task(t)
        assert model == L.from_node(n)
        assert all(_close(a, b) for a, b in zip(model.idle + model.used, L.from_node(n).idle + L.from_node(n).used))
        for i in range(2):
            assert abs(model.idle[i] + model.used[i] - model.allocatable[i]) < 1e-6


def L_idle_after_remove(n: NodeInfo, t: TaskInfo):
    c = n.clone()
    c.remove_task(t)
    return c.idle


def _close(a: float, b: float) -> bool:
    return abs(a - b) < 1e-6


def test_statement_ops_and_undo_restore_the_ledger():
    n = NodeInfo(node("n1", cpu="4"))
    base = L.from_node(n)
    for _, status, forward, undo in L.STATEMENT_OPS:
        s = base if status == TaskStatus.Pending else L.add_task(base, (1000.0, 1.0), status)
        assert undo(forward(s, (1000.0, 1.0)), (1000.0, 1.0)) == s


def test_nil_scalar_allocatable_breaks_the_pods_identity_on_the_reference():
    """ledger.scalars-identity-nil's counterexample, replayed on NodeInfo."""
    from schedcheck.reference.k8s import Node
    from tests.builders import rl

    n = NodeInfo(Node(name="n", uid="n", allocatable=rl(cpu="4", memory="8Gi")))  # no pods: nil scalar map
    t = _task(0, 1000, TaskStatus.Running)
    n.add_task(t)
    assert n.allocatable.get("pods") == 0 and n.idle.get("pods") == 0 and n.used.get("pods") == 1
    with_pods = NodeInfo(node("m", cpu="4"))
    with_pods.add_task(_task(1, 1000, TaskStatus.Running))
    assert with_pods.idle.get("pods") + with_pods.used.get("pods") == with_pods.allocatable.get("pods")
