"""BigQuery through the official google-cloud-bigquery client.

Credentials: `<credentials_dir>/bigquery_credential.json` (a service-account key), else the
file named by GOOGLE_APPLICATION_CREDENTIALS; with an endpoint set and neither, anonymous
credentials (that is how a local emulator is reached).

Cost: a dry run comes first and a query whose estimate exceeds `max_bytes_billed` is
refused before it runs; the real job also carries `maximum_bytes_billed`, so BigQuery
itself refuses anything the estimate missed.  Both become `cost_limit`.

Timeout: the job id is chosen here and sent to the parent before the job is submitted;
at the deadline this worker cancels the job, and if it is stuck the parent kills it and
cancels the job by id from a fresh worker.
"""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path

from evaluators.execution.backends import base
from evaluators.execution.backends.base import Backend, Outcome, QueryFailed, Request
from evaluators.execution.backends.settings import BigQuerySettings

CREDENTIAL_FILE = "bigquery_credential.json"
ENV_CREDENTIALS = "GOOGLE_APPLICATION_CREDENTIALS"
SCOPES = ("https://www.googleapis.com/auth/bigquery",)
QUERY_TYPES = {"SELECT", "SCRIPT"}  # statement types the dry run may report for trusted (gold) SQL
UNTRUSTED_TYPES = {"SELECT"}  # and for a prediction: one query only
_HTTP_PREFIX = re.compile(r"^(GET|POST|PUT|PATCH|DELETE) \S+: ")  # the client puts the request's URL first


class BigQueryBackend(Backend):
    name = "bigquery"
    kill_grace_s = 2.0  # room for the worker's own job.cancel() before the parent kills
    cancels_on_kill = True

    def secrets(self, request: Request) -> list[str]:
        found = base.secret_values(_credential_info(request))
        for extra in (request.env(ENV_CREDENTIALS), _gcloud_adc_file(request)):
            if extra:
                try:
                    found += base.secret_values(base.read_json_file(Path(extra)))
                except QueryFailed:
                    pass
        return found

    def run(self, request: Request, notify) -> Outcome:
        bigquery = base.import_driver("google.cloud.bigquery", "google-cloud-bigquery", "bigquery")
        base.import_driver("db_dtypes", "db-dtypes", "bigquery")  # to_dataframe needs it for DATE/TIME columns
        base.refuse_unless_one_query(request, "bigquery", unparsed_ok=True)  # the dry run confirms SELECT
        client = _client(bigquery, request)
        notify({"event": "started"})
        deadline = time.monotonic() + request.timeout_s
        _fetch_token(client, request)
        try:
            estimate = _dry_run(bigquery, client, request)
            cap = BigQuerySettings.of(request).max_bytes_billed
            if estimate > cap:
                raise QueryFailed(
                    "cost_limit",
                    f"the dry run estimates {estimate:,} bytes, over the cap of "
                    f"{cap:,} (raise it with --max-bytes-billed)",
                    bytes_processed=0,
                )
            return _run_job(bigquery, client, request, notify, cap, deadline)
        except QueryFailed:
            raise
        except Exception as exc:
            raise _failure(exc) from None

    def cancel(self, request: Request, handle: dict) -> str:
        bigquery = base.import_driver("google.cloud.bigquery", "google-cloud-bigquery", "bigquery")
        client = _client(bigquery, request)
        job = client.cancel_job(
            handle["job_id"], project=handle.get("project"), location=handle.get("location"), timeout=request.timeout_s
        )
        return f"cancel sent for job {handle['job_id']} (state now {job.state})"


def _credential_info(request: Request) -> dict | None:
    return base.read_json_file(Path(request.setting("credentials_dir", "credentials")) / CREDENTIAL_FILE)


def _client(bigquery, request: Request):
    credentials, project = _credentials(request)
    project = BigQuerySettings.of(request).project or project or _project_of(request.db_ref)
    if not project:
        raise QueryFailed(
            "credentials_missing",
            "no BigQuery project: give it in the credentials, "
            "with --bigquery-project, or as 'project.dataset' in the gold's db",
        )
    endpoint = BigQuerySettings.of(request).endpoint
    options = {"api_endpoint": endpoint} if endpoint else None
    return bigquery.Client(project=project, credentials=credentials, client_options=options)


def _credentials(request: Request):
    """(credentials, project from them) from the file, the environment, or anonymous for an endpoint."""
    info = _credential_info(request)
    try:
        if info is not None:
            from google.oauth2 import service_account

            return service_account.Credentials.from_service_account_info(info, scopes=SCOPES), info.get("project_id")
        if named := request.env(ENV_CREDENTIALS):
            return _environment_credentials(named)
        adc = _gcloud_adc_file(request)
        if adc is not None:  # Application Default Credentials from `gcloud auth application-default login`
            return _environment_credentials(str(adc))
    except (ValueError, KeyError) as exc:
        # The message of a broken key may quote it; say only which file is wrong.
        raise QueryFailed(
            "credentials_missing", f"the BigQuery credentials are not a valid key ({type(exc).__name__})"
        ) from None
    if BigQuerySettings.of(request).endpoint:
        from google.auth.credentials import AnonymousCredentials

        return AnonymousCredentials(), None
    raise QueryFailed(
        "credentials_missing",
        f"no BigQuery credentials: put a service-account key in "
        f"{CREDENTIAL_FILE} under the credentials folder, set {ENV_CREDENTIALS}, or run "
        "`gcloud auth application-default login`",
    )


def _fetch_token(client, request: Request) -> None:
    """Get the access token before any query, with a bounded wait, so an unreachable token endpoint is said
    as what it is (a network or credentials problem, naming the endpoint), not as a query that timed out."""
    credentials = client._credentials
    token_uri = getattr(credentials, "_token_uri", None) or getattr(credentials, "token_uri", None)
    if token_uri is None or getattr(credentials, "valid", False):
        return  # anonymous (an emulator) or already valid
    import google.auth.exceptions as auth_errors
    from google.auth.transport.requests import Request as Transport

    transport = Transport()
    limit = max(1.0, min(30.0, request.timeout_s))

    def bounded(*args, **kwargs):
        kwargs["timeout"] = limit
        return transport(*args, **kwargs)

    try:
        credentials.refresh(bounded)
    except auth_errors.TransportError as exc:
        raise QueryFailed(
            "network_error", f"cannot reach the BigQuery token endpoint {token_uri}: {base.first_line(exc)}"
        ) from None
    except auth_errors.RefreshError as exc:
        transient = getattr(exc, "retryable", False) or "connect" in str(exc).lower()
        raise QueryFailed(
            "network_error" if transient else "credentials_missing",
            f"the BigQuery token endpoint {token_uri} did not give a token: {base.first_line(exc)}",
        ) from None


def _gcloud_adc_file(request: Request) -> Path | None:
    """gcloud's application-default credentials file (CLOUDSDK_CONFIG, else ~/.config/gcloud). Read directly:
    `google.auth.default()` would also probe the GCE metadata server, a network call this grader never makes."""
    folder = request.env("CLOUDSDK_CONFIG")
    path = (Path(folder) if folder else Path.home() / ".config" / "gcloud") / "application_default_credentials.json"
    return path if path.is_file() else None


def _environment_credentials(path: str):
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    if not Path(path).is_file():
        raise QueryFailed("credentials_missing", f"{ENV_CREDENTIALS} names a file that does not exist")
    try:
        return google.auth.load_credentials_from_file(path, scopes=SCOPES)
    except DefaultCredentialsError as exc:
        raise ValueError(str(exc)) from None


def _project_of(db_ref: str | None) -> str | None:
    return db_ref.rsplit(".", 1)[0] if db_ref and "." in db_ref else None


def _job_config(bigquery, client, request: Request, **options):
    config = bigquery.QueryJobConfig(**options)
    if request.db_ref:
        dataset = request.db_ref if "." in request.db_ref else f"{client.project}.{request.db_ref}"
        config.default_dataset = dataset
    return config


def _dry_run(bigquery, client, request: Request) -> int:
    job = client.query(
        request.sql, job_config=_job_config(bigquery, client, request, dry_run=True, use_query_cache=False)
    )
    allowed = QUERY_TYPES if request.trusted else UNTRUSTED_TYPES
    # An empty statement type (the emulator gives none) is not a confirmation of anything for a prediction.
    if (job.statement_type or not request.trusted) and job.statement_type not in allowed:
        raise QueryFailed("exec_error", f"not run: only queries are graded, and this is a {job.statement_type}")
    return int(job.total_bytes_processed or 0)


def _run_job(bigquery, client, request: Request, notify, cap: int, deadline: float) -> Outcome:
    job_id = f"spider_grade_{uuid.uuid4().hex}"
    # The parent learns the id before the job exists, so it can cancel even if this process hangs.
    notify({"event": "handle", "job_id": job_id, "project": client.project, "location": client.location})
    # job_retry=None: a job cannot be retried under the same id (and a retry would run the query again).
    job = client.query(
        request.sql,
        job_config=_job_config(bigquery, client, request, maximum_bytes_billed=cap),
        job_id=job_id,
        job_retry=None,
    )
    try:
        rows = job.result(timeout=max(0.1, deadline - time.monotonic()))
    except TimeoutError:  # concurrent.futures.TimeoutError is TimeoutError since Python 3.11
        job.cancel()
        raise QueryFailed("timeout", f"job {job_id} cancelled after {request.timeout_s:g} s") from None
    frame = rows.to_dataframe(create_bqstorage_client=False)
    # Rows, when asked for, are read from this frame: the row iterator can be consumed only once.
    return base.keep_result(request, lambda: frame, bytes_processed=int(job.total_bytes_processed or 0))


def _failure(exc: Exception) -> QueryFailed:
    reasons = {e.get("reason") for e in (getattr(exc, "errors", None) or []) if isinstance(e, dict)}
    message = _HTTP_PREFIX.sub("", getattr(exc, "message", None) or str(exc))
    if "bytesBilledLimitExceeded" in reasons:
        return QueryFailed("cost_limit", base.first_line(message))
    return QueryFailed("exec_error", base.first_line(message))
