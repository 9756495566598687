/** The tool loop, history hooks and command line of the exported script. */
export const PYTHON_LOOP = String.raw`
# ---------------------------------------------------------------------------
# The agent loop: the model is the gateway's LLM primitive, so any provider works.
# ---------------------------------------------------------------------------
def max_turns_message(n):
    return "Stopped: the agent reached its max_turns limit (%d) before giving a final answer." % n


def run_loop(spec, messages, depth=0, on_event=lambda kind, payload: None):
    tools = TOOLS.get(spec["name"], [])
    impl = implementations(spec, depth, on_event)
    messages = list(messages)
    called = []
    last = ""
    def run_tool(call):
        on_event("tool", call["name"])
        fn = impl.get(call["name"])
        if fn is None:
            return "Error: unknown tool '%s'. Available tools: %s" % (call["name"], ", ".join(t["name"] for t in tools) or "(none)")
        try:
            return fn(call.get("input") or {})
        except Exception as err:  # tool errors go back to the model as text
            return "Error: %s" % (getattr(err, "detail", None) or err)
    for turn in range(1, spec["max_turns"] + 1):
        req = {"model": spec["model"], "system": spec["system_prompt"], "messages": messages,
               "temperature": spec["temperature"]}
        if tools:
            req["tools"] = tools
        if spec.get("max_tokens"):
            req["max_tokens"] = spec["max_tokens"]
        resp = api("POST", "/api/v1/llm/completions", req, spec)
        content = resp.get("content") or ""
        calls = resp.get("tool_calls") or []
        last = content
        if content:
            on_event("token", content)
        if not calls:
            return {"response": content, "turns_used": turn, "tools_called": called}
        messages.append({"role": "assistant", "content": content, "tool_calls": calls})
        called.extend(c["name"] for c in calls)
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(calls))) as pool:
            results = list(pool.map(run_tool, calls))
        messages.append({"role": "user", "content": "",
                         "tool_results": [{"tool_use_id": c["id"], "content": r} for c, r in zip(calls, results)]})
    note = max_turns_message(spec["max_turns"])
    return {"response": (last + "\n\n" + note) if last else note, "turns_used": spec["max_turns"], "tools_called": called}


_ACTOR = []


def actor_id():
    """The caller as the gateway sees it (memory events and {user_id} namespaces are keyed by it)."""
    if not _ACTOR:
        _ACTOR.append(api("GET", "/api/v1/auth/whoami")["id"])
    return _ACTOR[0]


def load_history(spec, actor, session_id):
    """auto_memory: the conversation lives in memory events (actor = the caller, session = session id)."""
    if not spec["hooks"].get("auto_memory"):
        return []
    events = api("GET", "/api/v1/memory/sessions/%s/%s/events" % (q(actor), q(session_id)), spec=spec, allow_404=True) or {}
    if isinstance(events, dict):
        events = events.get("events", [])
    out = []
    for e in events:
        if (e.get("metadata") or {}).get("agent_name", spec["name"]) != spec["name"]:
            continue
        for m in e.get("messages", []):
            if m.get("role") in ("user", "assistant"):
                out.append({"role": m["role"], "content": m.get("text", "")})
    return out


def save_turn(spec, actor, session_id, message, response):
    if not spec["hooks"].get("auto_memory"):
        return
    msgs = [{"role": "user", "text": message}]
    if response:
        msgs.append({"role": "assistant", "text": response})
    api("POST", "/api/v1/memory/sessions/%s/%s/events" % (q(actor), q(session_id)),
        {"messages": msgs, "metadata": {"agent_name": spec["name"]}}, spec)


def chat(message, session_id=None, verbose=False):
    spec = AGENTS[AGENT_NAME]
    session_id = session_id or str(uuid.uuid4())
    actor = actor_id() if spec["hooks"].get("auto_memory") else None
    history = load_history(spec, actor, session_id) if actor else []
    def on_event(kind, payload):
        if verbose and kind != "token":
            print("[%s] %s" % (kind, json.dumps(payload)), file=sys.stderr)
    result = run_loop(spec, history + [{"role": "user", "content": message}], 0, on_event)
    if actor:
        save_turn(spec, actor, session_id, message, result["response"])
    return dict(result, session_id=session_id, agent_name=AGENT_NAME)


def main(argv):
    import argparse
    parser = argparse.ArgumentParser(description="Run the exported Switchboard agent '%s'." % AGENT_NAME)
    parser.add_argument("message", nargs="?", help="one message; without it, an interactive prompt")
    parser.add_argument("--session", help="session id (continue a conversation)")
    parser.add_argument("--json", action="store_true", help="print the full result as JSON")
    parser.add_argument("--verbose", action="store_true", help="print tool calls to stderr")
    args = parser.parse_args(argv)
    session = args.session
    messages = [args.message] if args.message else None
    while True:
        if messages is None:
            try:
                line = input("you> ").strip()
            except EOFError:
                return 0
            if not line:
                continue
            batch = [line]
        else:
            batch = messages
        for message in batch:
            result = chat(message, session, args.verbose)
            session = result["session_id"]
            print(json.dumps(result) if args.json else result["response"])
        if messages is not None:
            return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
`;
