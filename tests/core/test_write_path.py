"""Every write of a record takes the one write path (`service.core.writing.writes`): no other module stamps
timestamps or runs the repository's hooks itself (attach, detach and sync included)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOOKS = "before_store|stored|before_update|updated|before_delete|deleted"


def test_only_the_write_path_runs_hooks_and_stamps_records():
    own_steps = re.compile(rf"run_hook\(|repository\.({HOOKS})\b|\[\"(created_at|updated_at)\"\]\s*=")
    found = {str(path.relative_to(ROOT)) for path in (ROOT / "service").rglob("*.py")
             if own_steps.search(path.read_text())}
    assert found == {"service/core/writing/writes.py"}
