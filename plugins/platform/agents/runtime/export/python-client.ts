/**
 * The part of the exported script that talks to Switchboard: configuration
 * from the environment, a bearer token refreshed before it expires, and JSON
 * requests with the standard library only.
 */
export const PYTHON_CLIENT = String.raw`
# ---------------------------------------------------------------------------
# Connection and authentication
#
#   SWITCHBOARD_URL            base URL of the gateway (default: the server this was exported from)
#   SWITCHBOARD_TOKEN          a static bearer token (JWT or API key), or
#   SWITCHBOARD_API_KEY        an API key sent as X-Api-Key, or
#   SWITCHBOARD_TOKEN_URL      an OAuth2 token endpoint; with SWITCHBOARD_CLIENT_ID and
#   SWITCHBOARD_CLIENT_SECRET  (and optional SWITCHBOARD_SCOPE) a client-credentials JWT is
#                              fetched and refreshed 60 s before it expires (and on a 401).
#   SWITCHBOARD_PROVIDER_*     e.g. SWITCHBOARD_PROVIDER_LLM=openai sends X-Provider-Llm.
# ---------------------------------------------------------------------------
BASE_URL = os.environ.get("SWITCHBOARD_URL", DEFAULT_BASE_URL).rstrip("/")
TIMEOUT = float(os.environ.get("SWITCHBOARD_TIMEOUT", "120"))


class SwitchboardError(Exception):
    def __init__(self, status, detail):
        super().__init__("HTTP %s: %s" % (status, detail))
        self.status = status
        self.detail = detail


def _jwt_expiry(token):
    """The exp claim of a JWT, or None when the token is not a JWT."""
    try:
        payload = token.split(".")[1]
        payload += "=" * (-len(payload) % 4)
        return float(json.loads(base64.urlsafe_b64decode(payload.encode())).get("exp"))
    except Exception:
        return None


class TokenSource:
    def __init__(self):
        self.static = os.environ.get("SWITCHBOARD_TOKEN")
        self.api_key = os.environ.get("SWITCHBOARD_API_KEY")
        self.token_url = os.environ.get("SWITCHBOARD_TOKEN_URL")
        self.token = None
        self.expires_at = 0.0
        self.lock = threading.Lock()

    def _refresh(self):
        form = {"grant_type": "client_credentials",
                "client_id": os.environ.get("SWITCHBOARD_CLIENT_ID", ""),
                "client_secret": os.environ.get("SWITCHBOARD_CLIENT_SECRET", "")}
        if os.environ.get("SWITCHBOARD_SCOPE"):
            form["scope"] = os.environ["SWITCHBOARD_SCOPE"]
        req = urllib.request.Request(self.token_url, data=urllib.parse.urlencode(form).encode(),
                                     headers={"Content-Type": "application/x-www-form-urlencoded"})
        with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:
            body = json.loads(resp.read().decode())
        self.token = body["access_token"]
        exp = _jwt_expiry(self.token)
        self.expires_at = exp if exp else time.time() + float(body.get("expires_in", 300))

    def headers(self, force_refresh=False):
        if self.token_url:
            with self.lock:
                if force_refresh or self.token is None or time.time() > self.expires_at - 60:
                    self._refresh()
            return {"Authorization": "Bearer " + self.token}
        if self.static:
            return {"Authorization": "Bearer " + self.static}
        if self.api_key:
            return {"X-Api-Key": self.api_key}
        return {}


TOKENS = TokenSource()


def provider_headers(spec):
    """Routing headers: the agent's provider_overrides, then SWITCHBOARD_PROVIDER_* from the environment."""
    out = {}
    for primitive, name in (spec.get("provider_overrides") or {}).items():
        out["X-Provider-" + "-".join(p.capitalize() for p in primitive.split("_"))] = name
    for key, value in os.environ.items():
        if key.startswith("SWITCHBOARD_PROVIDER_") and value:
            primitive = key[len("SWITCHBOARD_PROVIDER_"):].lower()
            out["X-Provider-" + "-".join(p.capitalize() for p in primitive.split("_"))] = value
    return out


def api(method, path, body=None, spec=None, allow_404=False):
    """One JSON call to the gateway; retried once with a fresh token on 401."""
    for attempt in (0, 1):
        headers = {"Accept": "application/json", **TOKENS.headers(force_refresh=attempt == 1)}
        if spec is not None:
            headers.update(provider_headers(spec))
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(BASE_URL + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:
                raw = resp.read().decode()
                return json.loads(raw) if raw else {}
        except urllib.error.HTTPError as err:
            raw = err.read().decode(errors="replace")
            try:
                detail = json.loads(raw).get("detail", raw)
            except Exception:
                detail = raw
            if err.code == 401 and attempt == 0 and TOKENS.token_url:
                continue
            if err.code == 404 and allow_404:
                return None
            raise SwitchboardError(err.code, detail)


def q(segment):
    return urllib.parse.quote(str(segment), safe="")
`;
