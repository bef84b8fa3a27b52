"""examples/kubernetes/ as a user deploys it, without a cluster: the Indexed Job's manifest is
checked (Indexed completion mode, `--shard-count` equal to `completions`, `--shard auto`, one report
per JOB_COMPLETION_INDEX on the volume the merge Job reads), then each pod's shell command is run
here with JOB_COMPLETION_INDEX = 0 .. completions − 1 as Kubernetes sets it, and the merge Job's
command joins their reports into the report of the same sweep run unsharded, byte for byte.
The pods' `ropecheck` is this build's, their volume a temporary folder, and the sweep smaller
(--samples 4096: the whole manifest's sweep takes minutes).

Usage: check_kubernetes_job.py ROPECHECK EXAMPLE_DIR. Exit 0 pass, 1 fail, 77 skip (PyYAML missing).
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("SKIP: PyYAML is not installed (Debian: python3-yaml; scripts/setup installs it)")
    sys.exit(77)

ropecheck, example_dir = sys.argv[1], sys.argv[2]
SAMPLES = "--samples 1048576"
SMALL = "--samples 4096"


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def load(name):
    with open(os.path.join(example_dir, name), encoding="utf-8") as f:
        return yaml.safe_load(f)


sweep, merge, claim = load("sweep-job.yaml"), load("merge-job.yaml"), load("reports-pvc.yaml")
spec = sweep["spec"]
if sweep["kind"] != "Job" or spec.get("completionMode") != "Indexed":
    fail("sweep-job.yaml: expected a Job with completionMode: Indexed")
completions = spec["completions"]
pod = spec["template"]["spec"]
if pod.get("restartPolicy") != "Never":
    fail("sweep-job.yaml: expected restartPolicy: Never (a shard is run once; the merge finds a missing one)")
container = pod["containers"][0]
command = " ".join(container["args"])
count = re.search(r"--shard auto --shard-count (\d+)", command)
if not count:
    fail("sweep-job.yaml: expected `--shard auto --shard-count N` in the sweep's command: " + command)
if int(count.group(1)) != completions:
    fail(f"sweep-job.yaml: --shard-count {count.group(1)}: expected {completions}, the Job's completions")
if "$JOB_COMPLETION_INDEX" not in command or SAMPLES not in command:
    fail("sweep-job.yaml: expected a report per $JOB_COMPLETION_INDEX and " + SAMPLES)
mount = container["volumeMounts"][0]["mountPath"]
merge_container = merge["spec"]["template"]["spec"]["containers"][0]
merge_command = " ".join(merge_container["args"])
for name, p in (("sweep-job.yaml", pod), ("merge-job.yaml", merge["spec"]["template"]["spec"])):
    if p["volumes"][0]["persistentVolumeClaim"]["claimName"] != claim["metadata"]["name"]:
        fail(f"{name}: expected the claim {claim['metadata']['name']} of reports-pvc.yaml")
if merge_container["volumeMounts"][0]["mountPath"] != mount:
    fail("merge-job.yaml: expected the volume at " + mount + " as the sweep's pods mount it")

with tempfile.TemporaryDirectory(prefix="ropecheck-k8s-") as work:
    reports = os.path.join(work, "reports")
    os.mkdir(reports)

    def local(text):
        # The pod's command with this build's ropecheck, the folder as the volume, a smaller sweep.
        return text.replace("ropecheck ", shlex.quote(ropecheck) + " ", 1).replace(mount + "/", reports + "/").replace(SAMPLES, SMALL)

    environment = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_") and k != "JOB_COMPLETION_INDEX"}
    for index in range(completions):
        r = subprocess.run(["/bin/sh", "-c", local(command)], env=dict(environment, JOB_COMPLETION_INDEX=str(index)),
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            fail(f"pod {index}: exit {r.returncode}: {r.stderr}")
        if f"shard: {index}/{completions} (Kubernetes Indexed Job JOB_COMPLETION_INDEX={index}" not in r.stdout:
            fail(f"pod {index}: no shard {index}/{completions} line in:\n{r.stdout}")
    r = subprocess.run(["/bin/sh", "-c", local(merge_command)], env=environment, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail(f"merge: exit {r.returncode}: {r.stderr}")
    # The same sweep, unsharded: the pod's arguments without the shard options and the report path.
    words = shlex.split(local(command).split(";")[0])
    i = words.index("--shard")
    del words[i:i + 4]  # --shard auto --shard-count N
    j = words.index("--json")
    words[j + 1] = os.path.join(work, "whole.json")
    r = subprocess.run(words, env=environment, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail(f"unsharded sweep: exit {r.returncode}: {r.stderr}")
    with open(os.path.join(work, "whole.json"), "rb") as a, open(os.path.join(reports, "sweep.json"), "rb") as b:
        if a.read() != b.read():
            fail("the merged report differs from the unsharded one")
print(f"PASS: {completions} pods of the Indexed Job merge to the unsharded report")
