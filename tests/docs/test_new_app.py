"""The getting-started page's steps for an application of one's own run as written: the shell block after
`<!-- new-app -->` in docs/index.md, top to bottom, in a scratch directory (`localhost:8000` becomes a free
port, which `restify serve` takes from PORT)."""
import os
import re
import subprocess
import sys
from pathlib import Path

from storage.embedded import free_port
from tests.processes import ROOT, RUN_WAIT

BLOCK = re.compile(r"^<!-- new-app -->\n```bash\n(.*?)^```$", re.M | re.S)


def test_the_new_app_steps_run_as_written(tmp_path):
    found = BLOCK.findall((ROOT / "docs" / "index.md").read_text())
    assert len(found) == 1, "docs/index.md has one <!-- new-app --> block"
    port = free_port()
    script = found[0].replace(":8000", f":{port}")
    bin_dir = str(Path(sys.executable).parent)
    env = {key: value for key, value in os.environ.items() if key != "MONGODB_URI"}  # its own embedded database
    env.update({"PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", "PORT": str(port), "HOST": "127.0.0.1",
                "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                # The smoke test registers and logs in: the cheapest argon2 the settings take.
                "RESTIFY_AUTH_ARGON2_TIME_COST": "1", "RESTIFY_AUTH_ARGON2_MEMORY_KIB": "1024"})
    # Whatever happens, the served app stops with the shell (the block's last line does it when all goes well).
    script = "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + script
    result = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=4 * RUN_WAIT)
    log = tmp_path / "blog" / "serve.log"
    assert result.returncode == 0, result.stdout + result.stderr + (log.read_text() if log.exists() else "")
    # The smoke tests pass against the served app, then on a database of their own.
    assert len(re.findall(r"\b\d+ passed", result.stdout)) == 2 and "failed" not in result.stdout, result.stdout
    assert (tmp_path / "blog" / "repositories" / "post.py").is_file()
    assert "PostPolicy" in (tmp_path / "blog" / "repositories" / "policies.py").read_text()
