/**
 * The orchestration part of the exported team script: the planner writes a
 * task list, workers run ready tasks in parallel (each task in its own chat
 * session), results go to the shared memory namespace when one is set, a live
 * task board is printed to stderr, and the synthesizer writes the answer.
 * `global_max_turns` and `global_timeout_seconds` are enforced here, and a
 * task assigned to an unknown worker fails instead of waiting forever.
 */
export const TEAM_PYTHON_RUN = String.raw`
PLAN_PROMPT = """You are planning work for a team. Split the request below into tasks for these workers: {workers}.
Answer with a JSON array only. Each task: {{"id": "t1", "title": "...", "description": "...", "assigned_to": "<worker>", "depends_on": ["<task id>", ...]}}.

Request:
{message}"""

WORKER_PROMPT = """You are working on one task of a team run.
Task {task_id}: {title}
{description}
{context}"""

REPLAN_PROMPT = """Some tasks of the team failed. Plan replacement tasks for these workers: {workers}.
Answer with a JSON array only (an empty array if nothing can be done), in the same task format; new tasks may depend on tasks that are done.

Request:
{message}

Task board:
{board}"""

SYNTH_PROMPT = """Compose the final answer to the request from the task results.

Request:
{message}

Task results:
{results}"""


class Board:
    """The live task board: every change is printed to stderr (silence it with SWITCHBOARD_QUIET=1)."""

    def __init__(self, run_id):
        self.run_id = run_id
        self.phase = "planning"
        self.tasks = []
        self.lock = threading.Lock()
        self.quiet = os.environ.get("SWITCHBOARD_QUIET") == "1"

    def show(self, note):
        if self.quiet:
            return
        with self.lock:
            lines = ["[%s] %s: %s" % (self.run_id[:8], self.phase, note)]
            for t in self.tasks:
                lines.append("  %-12s %-8s %-16s %s" % (t["status"], t["id"], t["assigned_to"] or "-", t["title"]))
            print("\n".join(lines), file=sys.stderr, flush=True)

    def set(self, task, status, result=None):
        with self.lock:
            task["status"] = status
            if result is not None:
                task["result"] = result
        self.show("%s %s" % (task["id"], status))


def extract_tasks(text, taken=()):
    """The first JSON array in the planner's answer, normalised to task records; ids on the board stay unique."""
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end <= start:
        raise ValueError("the planner did not answer a JSON task list: %r" % text[:200])
    raw = json.loads(text[start:end + 1])
    tasks = []
    seen = set(taken)
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            continue
        base_id = task_id = str(item.get("id") or "t%d" % (i + 1))
        n = 1
        while task_id in seen:
            n += 1
            task_id = "%s_%d" % (base_id, n)
        seen.add(task_id)
        tasks.append({
            "id": task_id,
            "title": str(item.get("title") or item.get("description") or "task %d" % (i + 1)),
            "description": str(item.get("description") or ""),
            "assigned_to": item.get("assigned_to"),
            "depends_on": [str(d) for d in (item.get("depends_on") or [])],
            "status": "pending",
            "result": None,
        })
    return tasks


class Run:
    def __init__(self, message):
        self.message = message
        self.run_id = str(uuid.uuid4())
        self.board = Board(self.run_id)
        self.deadline = time.time() + TEAM["global_timeout_seconds"]
        self.turns = 0
        self.turn_lock = threading.Lock()
        ns = TEAM.get("shared_memory_namespace")
        self.namespace = ns.replace("{team_name}", TEAM["name"]) if ns else None

    def remaining(self):
        return self.deadline - time.time()

    def chat(self, agent, message, session_id):
        left = self.remaining()
        if left <= 0:
            raise TimeoutError("global_timeout_seconds (%s) reached" % TEAM["global_timeout_seconds"])
        out = call("POST", "/api/v1/agents/%s/chat" % seg(agent), {"message": message, "session_id": session_id},
                   timeout=min(HTTP_TIMEOUT, left))
        with self.turn_lock:
            self.turns += int(out.get("turns_used") or 1)
        return out.get("response", "")

    def shared_findings(self):
        if not self.namespace:
            return ""
        try:
            listed = call("GET", "/api/v1/memory/%s?limit=50" % seg(self.namespace))
        except GatewayError:
            return ""
        notes = ["- %s" % r.get("content", "") for r in listed.get("records", [])]
        return ("\nShared findings of the team:\n" + "\n".join(notes)) if notes else ""

    def share(self, task, result):
        """Best effort: a memory outage costs the team its shared notes, not the task's result."""
        if not self.namespace:
            return
        try:
            call("POST", "/api/v1/memory/%s" % seg(self.namespace), {
                "key": "%s:%s" % (self.run_id, task["id"]), "content": result,
                "metadata": {"team_run_id": self.run_id, "task_id": task["id"], "agent": task["assigned_to"]},
            })
        except (GatewayError, urllib.error.URLError) as err:
            self.board.show("could not share the result of %s: %s" % (task["id"], err))

    def work(self, task, by_id):
        context = "".join("\nResult of %s (%s):\n%s\n" % (d, by_id[d]["title"], by_id[d]["result"]) for d in task["depends_on"])
        prompt = WORKER_PROMPT.format(task_id=task["id"], title=task["title"], description=task["description"],
                                      context=context + self.shared_findings())
        # One session per task: workers never see each other's conversations.
        result = self.chat(task["assigned_to"], prompt, "%s-%s" % (self.run_id, task["id"]))
        self.share(task, result)
        return result

    def execute(self, tasks, fresh):
        by_id = {t["id"]: t for t in tasks}
        for t in fresh:
            if t["assigned_to"] not in TEAM["workers"]:
                self.board.set(t, "failed", "assigned to unknown worker '%s' (workers: %s)" % (t["assigned_to"] or "", ", ".join(TEAM["workers"])))
            elif any(d not in by_id for d in t["depends_on"]):
                missing = [d for d in t["depends_on"] if d not in by_id]
                self.board.set(t, "failed", "depends on unknown task %s" % ", ".join("'%s'" % m for m in missing))
        running = {}
        with ThreadPoolExecutor(max_workers=TEAM.get("max_concurrent") or max(1, len(TEAM["workers"]))) as pool:
            while True:
                for t in tasks:
                    if t["status"] != "pending":
                        continue
                    deps = [by_id[d] for d in t["depends_on"]]
                    failed = [d for d in deps if d["status"] == "failed"]
                    if failed:
                        self.board.set(t, "failed", "dependency '%s' failed" % failed[0]["id"])
                    elif all(d["status"] == "done" for d in deps):
                        if self.turns >= TEAM["global_max_turns"]:
                            self.board.set(t, "failed", "global_max_turns (%s) reached" % TEAM["global_max_turns"])
                        elif self.remaining() <= 0:
                            self.board.set(t, "failed", "global_timeout_seconds (%s) reached" % TEAM["global_timeout_seconds"])
                        else:
                            self.board.set(t, "in_progress")
                            running[pool.submit(self.work, t, by_id)] = t
                if not running:
                    break
                done, _ = wait(list(running), timeout=max(0.1, self.remaining()), return_when=FIRST_COMPLETED)
                if not done and self.remaining() <= 0:
                    for t in running.values():
                        self.board.set(t, "failed", "global_timeout_seconds (%s) reached" % TEAM["global_timeout_seconds"])
                    break
                for fut in done:
                    t = running.pop(fut)
                    try:
                        self.board.set(t, "done", fut.result())
                    except Exception as err:
                        self.board.set(t, "failed", str(err))
        for t in tasks:
            if t["status"] == "pending":
                self.board.set(t, "failed", "dependencies can never complete (cycle)")

    @staticmethod
    def result_lines(tasks):
        return "\n".join("%s %s [%s]: %s" % (t["id"], t["title"], t["status"], t["result"]) for t in tasks)

    def run(self):
        self.board.show("team %s started" % TEAM["name"])
        plan = self.chat(TEAM["planner"], PLAN_PROMPT.format(workers=", ".join(TEAM["workers"]), message=self.message),
                         "%s-planner" % self.run_id)
        tasks = extract_tasks(plan)
        self.board.tasks = tasks
        self.board.phase = "execution"
        self.board.show("%d tasks created" % len(tasks))
        self.execute(tasks, tasks)
        # Bounded replanning, as the server does: the planner sees the board with the failures.
        replans = 0
        while any(t["status"] == "failed" for t in tasks) and replans < MAX_REPLANS:
            replans += 1
            self.board.phase = "replanning"
            plan = self.chat(TEAM["planner"], REPLAN_PROMPT.format(workers=", ".join(TEAM["workers"]), message=self.message,
                                                                   board=self.result_lines(tasks)), "%s-planner" % self.run_id)
            try:
                fresh = extract_tasks(plan, [t["id"] for t in tasks])
            except ValueError:
                fresh = []
            if not fresh:
                break
            tasks.extend(fresh)
            self.board.phase = "execution"
            self.board.show("%d tasks added" % len(fresh))
            self.execute(tasks, fresh)
        self.board.phase = "synthesis"
        results = self.result_lines(tasks)
        response = self.chat(TEAM["synthesizer"], SYNTH_PROMPT.format(message=self.message, results=results),
                             "%s-synthesizer" % self.run_id)
        self.board.phase = "done"
        self.board.show("finished")
        return {
            "response": response,
            "team_run_id": self.run_id,
            "team_name": TEAM["name"],
            "phase": "done",
            "tasks_created": len(tasks),
            "tasks_completed": sum(1 for t in tasks if t["status"] == "done"),
            "workers_used": sorted({t["assigned_to"] for t in tasks if t["status"] == "done"}),
            "tasks": [{k: t[k] for k in ("id", "title", "status", "assigned_to", "result", "depends_on")} for t in tasks],
            "turns_used": self.turns,
        }


def main(argv):
    as_json = "--json" in argv
    words = [a for a in argv if a != "--json"]
    message = " ".join(words) if words else sys.stdin.read().strip()
    if not message:
        print("usage: %s [--json] MESSAGE   (or the message on stdin)" % os.path.basename(sys.argv[0]), file=sys.stderr)
        return 2
    try:
        out = Run(message).run()
    except (GatewayError, ValueError, TimeoutError, urllib.error.URLError) as err:
        print("team run failed: %s" % err, file=sys.stderr)
        return 1
    print(json.dumps(out, indent=2) if as_json else out["response"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
`;
