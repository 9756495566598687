/**
 * Connection part of the exported team script: configuration from the
 * environment, auth headers (static token, API key, or a client-credentials
 * JWT refreshed before expiry) and JSON calls with the standard library only.
 */
export const TEAM_PYTHON_CLIENT = String.raw`
# Connection and authentication (environment):
#   SWITCHBOARD_URL            gateway base URL (default: the server this was exported from)
#   SWITCHBOARD_TOKEN          bearer token (JWT or API key), or
#   SWITCHBOARD_API_KEY        API key sent as X-Api-Key, or
#   SWITCHBOARD_TOKEN_URL      OAuth2 token endpoint; with SWITCHBOARD_CLIENT_ID / SWITCHBOARD_CLIENT_SECRET
#                              a client-credentials JWT is fetched and renewed 60 s before it expires.
#   SWITCHBOARD_TIMEOUT        seconds per HTTP call (default 300)
BASE_URL = os.environ.get("SWITCHBOARD_URL", DEFAULT_BASE_URL).rstrip("/")
HTTP_TIMEOUT = float(os.environ.get("SWITCHBOARD_TIMEOUT", "300"))


class GatewayError(Exception):
    def __init__(self, status, detail):
        super().__init__("HTTP %s: %s" % (status, detail))
        self.status = status


class Credentials:
    def __init__(self):
        self.lock = threading.Lock()
        self.token = None
        self.expires_at = 0.0

    def _fetch(self):
        form = urllib.parse.urlencode({
            "grant_type": "client_credentials",
            "client_id": os.environ.get("SWITCHBOARD_CLIENT_ID", ""),
            "client_secret": os.environ.get("SWITCHBOARD_CLIENT_SECRET", ""),
        }).encode()
        req = urllib.request.Request(os.environ["SWITCHBOARD_TOKEN_URL"], data=form,
                                     headers={"Content-Type": "application/x-www-form-urlencoded"})
        with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT) as resp:
            body = json.loads(resp.read().decode())
        self.token = body["access_token"]
        self.expires_at = time.time() + float(body.get("expires_in", 300))

    def headers(self, renew=False):
        if os.environ.get("SWITCHBOARD_TOKEN_URL"):
            with self.lock:
                if renew or self.token is None or time.time() > self.expires_at - 60:
                    self._fetch()
            return {"Authorization": "Bearer " + self.token}
        if os.environ.get("SWITCHBOARD_TOKEN"):
            return {"Authorization": "Bearer " + os.environ["SWITCHBOARD_TOKEN"]}
        if os.environ.get("SWITCHBOARD_API_KEY"):
            return {"X-Api-Key": os.environ["SWITCHBOARD_API_KEY"]}
        return {}


CREDENTIALS = Credentials()


def call(method, path, body=None, timeout=None):
    """One JSON request to the gateway; a 401 with a token endpoint is retried once with a new token."""
    for attempt in (0, 1):
        headers = {"Accept": "application/json", **CREDENTIALS.headers(renew=attempt == 1)}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(BASE_URL + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout or HTTP_TIMEOUT) as resp:
                raw = resp.read().decode()
                return json.loads(raw) if raw else {}
        except urllib.error.HTTPError as err:
            raw = err.read().decode(errors="replace")
            try:
                detail = json.loads(raw).get("detail", raw)
            except Exception:
                detail = raw
            if err.code == 401 and attempt == 0 and os.environ.get("SWITCHBOARD_TOKEN_URL"):
                continue
            raise GatewayError(err.code, detail)


def seg(value):
    return urllib.parse.quote(str(value), safe="")
`;
