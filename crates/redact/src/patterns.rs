//! The table of secret shapes: one entry per family, each with the regex
//! that finds it and examples that pin what it masks and what it leaves
//! alone (checked by `patterns_tests.rs`).
//!
//! What an entry masks: the text of every capture group that took part in a
//! match, or the whole match when none did. Everything the regex needs for
//! context (a header name, a URL's scheme and user) sits in non-capturing
//! groups, so it is kept. Patterns must not nest capture groups.
//!
//! Word boundaries are written `(?-u:\b)` (ASCII) on purpose: a Unicode `\b`
//! makes the regex crate leave its lazy DFA for a slower engine as soon as
//! the text holds a non-ASCII byte, and masking runs over every answer.
//!
//! This module is data only: it must not compile, log or hold state.

/// One family of secrets.
#[derive(Debug, Clone, Copy)]
pub struct SecretPattern {
    /// Short name, for diagnostics (never printed with the secret).
    pub name: &'static str,
    /// The regex (regex crate syntax); capture groups mark what is masked.
    pub regex: &'static str,
    /// A regex for masked spans that are not secrets after all (type names,
    /// references such as `process.env.API_KEY`): a span it matches whole is
    /// kept. For families whose context cannot tell code from a value.
    pub keep: Option<&'static str>,
    /// Text holding a secret of this family, and the same text after
    /// masking with the whole table.
    pub positives: &'static [(&'static str, &'static str)],
    /// Text that looks close but holds no secret: left exactly as it is.
    pub negatives: &'static [&'static str],
}

/// Names that say their value is a secret, in `NAME=value`, `NAME: value`
/// and `"NAME": "value"`. The secret word must END the name, so counts and
/// limits (`max_tokens`, `token_count`, `tokens`) are not names of secrets.
/// `key` alone is too common (YAML `key:` fields, `primary_key`, `sort_key`)
/// so a name ending in key needs a qualifier before it (`api_key`,
/// `x-api-key`, `apiKey`, `secret_key`), or must be an upper-case
/// environment-style name (`STRIPE_KEY`).
macro_rules! secret_name {
    () => {
        concat!(
            r"(?:(?i:[a-z0-9_.-]*(?:token|secret|password|passwd|passphrase|credentials?))",
            r"|(?i:[a-z0-9_.-]*(?:api|access|secret|private|auth|client|app|master|signing|encryption|license|service|account|webhook|admin|session|subscription|deploy|consumer|storage|shared|ingest)[_.-]?key)",
            r"|[A-Z0-9_]*[A-Z0-9]_KEY)"
        )
    };
}

/// A JSON string's content: escapes kept whole, so masking never leaves a
/// dangling backslash that would change where the string ends.
macro_rules! json_string_content {
    () => {
        r#"((?:[^"\\\r\n]|\\[^\r\n])+)"#
    };
}

/// An unquoted value after `NAME=` / `NAME:`. Excluded on purpose: values
/// that are only digits and shorter than 10 (counts, ports, limits: `token:
/// 100`), and values starting with `$` (a reference such as
/// `${DB_PASSWORD}`, not the secret itself). Stops at whitespace, quotes,
/// separators and brackets.
macro_rules! unquoted_value {
    () => {
        concat!(
            r#"((?:[0-9]{10,}|[0-9]+[^\s"'`,;&<>(){}\[\]\\0-9]|[^\s"'`,;&<>(){}\[\]\\0-9$])"#,
            r#"[^\s"'`,;&<>(){}\[\]\\]*)"#
        )
    };
}

/// Every family, in the order they are applied: whole blocks and headers
/// first, so a token inside them is masked as part of the larger span.
pub static SECRET_PATTERNS: &[SecretPattern] = &[
    SecretPattern {
        name: "pem_private_key",
        // The whole block, across lines (also with JSON-escaped newlines).
        // A block cut off before its END line (truncated output) is masked
        // through its base64 lines.
        regex: r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|(?:(?:\\n|\r?\n)[A-Za-z0-9+/=]{16,})*)",
        keep: None,
        positives: &[
            (
                "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7xq\nAbCdEf==\n-----END RSA PRIVATE KEY-----\ndone",
                "key:\n***\ndone",
            ),
            (
                r#"{"pem": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"}"#,
                r#"{"pem": "***\n"}"#,
            ),
            (
                "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAAAAAAAEAAAAzAAAAC3NzaC1lZDI1NTE5AAAAI\n[output truncated]",
                "***\n[output truncated]",
            ),
        ],
        negatives: &[
            "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
            "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ\n-----END CERTIFICATE-----",
            "a PRIVATE KEY is kept in a file readable only by its owner",
        ],
    },
    SecretPattern {
        name: "authorization_header",
        // The credentials after the scheme (any word), to the end of the line
        // or the closing quote (Digest and AWS4 carry several comma-separated
        // parts); without a scheme, one token. At least 8 characters, not starting with `$`, `{` or `<`: code and
        // docs name the token (`Bearer $OPENAI_API_KEY`, f"Bearer {token}")
        // and must stay readable.
        regex: r#"(?i)(?-u:\b)(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?(?:[a-z][a-z0-9._-]*[ \t]+([^\s"'$<{][^"'\r\n]{7,})|([^\s"'$<{][^\s"']{7,}))"#,
        keep: None,
        positives: &[
            (
                "Authorization: Bearer abc.def.ghi-jkl",
                "Authorization: Bearer ***",
            ),
            (
                "curl -H 'authorization: token qqqqqqqqqq'",
                "curl -H 'authorization: token ***'",
            ),
            (
                r#"{"Authorization": "Basic dXNlcjpwYXNzd29yZA=="}"#,
                r#"{"Authorization": "Basic ***"}"#,
            ),
            ("authorization=0123456789abcdef", "authorization=***"),
            (
                "Proxy-Authorization: Negotiate YIIFzwYGKwYBBQUCoIIFwz\nHost: x",
                "Proxy-Authorization: Negotiate ***\nHost: x",
            ),
        ],
        negatives: &[
            "the authorization flow is described below",
            "Authorization is required for this endpoint",
            "authorization:\n",
            r#"curl -H "Authorization: Bearer $OPENAI_API_KEY" https://api.openai.com"#,
            r#"headers = {"Authorization": f"Bearer {token}"}"#,
            r#"headers["Authorization"] = "Bearer " + token"#,
            "Authorization: Bearer <token>",
        ],
    },
    SecretPattern {
        name: "bearer_token",
        // A bearer token outside a header (`curl ... Bearer xyz`). At least
        // 16 characters, so prose ("bearer authentication") is left alone.
        regex: r"(?i)(?-u:\b)bearer[ \t]+([A-Za-z0-9._~+/-]{16,}=*)",
        keep: None,
        positives: &[
            (
                "send it with Bearer 0123456789abcdef0123 please",
                "send it with Bearer *** please",
            ),
            ("bearer ya29.a0AfH6SMBx-yz_0123", "bearer ***"),
        ],
        negatives: &[
            "bearer tokens are short-lived",
            "the bearer authentication scheme (RFC 6750)",
        ],
    },
    SecretPattern {
        name: "url_credentials",
        // scheme://user:password@host: the password only; scheme, user and
        // host stay readable.
        // A password starting with `$` is a reference (`:${DB_PASSWORD}@`).
        regex: r#"(?i)(?-u:\b)[a-z][a-z0-9+.-]*://[^\s:/?#@"'<>]*:([^\s@/?#"'<>$][^\s@/?#"'<>]*)@"#,
        keep: None,
        positives: &[
            (
                "postgres://admin:hunter2@db.internal:5432/app",
                "postgres://admin:***@db.internal:5432/app",
            ),
            ("https://user:pass@host", "https://user:***@host"),
            (
                "redis://:s3cr3tpass@cache:6379/0",
                "redis://:***@cache:6379/0",
            ),
        ],
        negatives: &[
            "https://example.com:8443/path?q=1",
            "ssh://git@github.com:22/org/repo.git",
            "mailto:someone@example.com",
            "http://[::1]:8080/health",
            "see http://host:8080 and write to me@example.com",
            "postgres://app:${DB_PASSWORD}@db:5432/app",
        ],
    },
    SecretPattern {
        name: "url_query_secret",
        // Query parameters that carry a credential under a short name the
        // NAME=value rule does not treat as secret (key, sig, auth, AWS
        // presigned URLs).
        regex: r#"(?i)[?&](?:key|sig|signature|auth|x-amz-signature|x-amz-credential)=([^&\s#"'<>]+)"#,
        keep: None,
        positives: &[
            (
                "https://maps.example.com/api?key=abc123def456&q=paris",
                "https://maps.example.com/api?key=***&q=paris",
            ),
            (
                "GET /file?X-Amz-Signature=0a1b2c3d4e&X-Amz-Expires=60",
                "GET /file?X-Amz-Signature=***&X-Amz-Expires=60",
            ),
        ],
        negatives: &[
            "https://example.com/search?keyword=rust&user=bob&x=1",
            "https://example.com/?q=signature+verification",
        ],
    },
    SecretPattern {
        name: "anthropic_key",
        regex: r"(?-u:\b)sk-ant-[A-Za-z0-9_-]{20,}",
        keep: None,
        positives: &[(
            "key sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345-AA ok",
            "key *** ok",
        )],
        negatives: &["sk-ant-short", "task-ant-abcdefghijklmnopqrstuvwxyz"],
    },
    SecretPattern {
        name: "openai_key",
        // Project, service-account and admin keys (`sk-proj-...`), and the
        // older form: `sk-` and 20+ letters and digits without a hyphen, so
        // `sk-learn-compatible-...` prose is not a key.
        regex: r"(?-u:\b)sk-(?:(?:proj|svcacct|admin|or-v1)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{20,}[A-Za-z0-9_-]*)",
        keep: None,
        positives: &[
            ("sk-proj-abcdefghijklmnopqrstuvwx", "***"),
            (
                "use sk-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ now",
                "use *** now",
            ),
            ("sk-svcacct-Ab12Cd34Ef56Gh78Ij90Kl_-xyz", "***"),
        ],
        negatives: &[
            "sk-learn-compatible-estimators-library",
            "the risk-adjusted-return-calculation-model",
            "sk-proj-short",
        ],
    },
    SecretPattern {
        name: "aws_access_key_id",
        regex: r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?-u:\b)",
        keep: None,
        positives: &[(
            "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
            "aws_access_key_id = ***",
        )],
        negatives: &[
            "AKIA is the prefix of long-lived AWS key ids",
            "AKIAIOSFODNN7EXAMPLEXTRA",
        ],
    },
    SecretPattern {
        name: "aws_secret_access_key",
        // 40 base64 characters after an aws_secret_access_key-ish name
        // (credentials files, env dumps, STS JSON `SecretAccessKey`).
        regex: r#"(?i)(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)["']?[ \t]*(?::=|=>|[:=])[ \t]*["']?([A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)"#,
        keep: None,
        positives: &[
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
                "aws_secret_access_key = ***\n",
            ),
            (
                r#"{"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}"#,
                r#"{"SecretAccessKey": "***"}"#,
            ),
        ],
        negatives: &[
            "aws_secret_access_key = <your secret access key>",
            "aws_secret_access_key = ${AWS_SECRET}",
        ],
    },
    SecretPattern {
        name: "github_classic_token",
        regex: r"(?-u:\b)gh[pousr]_[A-Za-z0-9]{30,}",
        keep: None,
        positives: &[
            ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "***"),
            (
                "token ghs_16C7e42F292c6912E7710c838347Ae178B4a used",
                "token *** used",
            ),
        ],
        negatives: &[
            "ghp_ tokens start with ghp_",
            "ghx_abcdefghijklmnopqrstuvwxyz0123456789",
            "ghp_short123",
        ],
    },
    SecretPattern {
        name: "github_fine_grained_token",
        regex: r"(?-u:\b)github_pat_[A-Za-z0-9_]{30,}",
        keep: None,
        positives: &[("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "***")],
        negatives: &["github_pat_ is the prefix", "github_pat_docs_example"],
    },
    SecretPattern {
        name: "gitlab_token",
        regex: r"(?-u:\b)gl(?:pat|dt|rt|ptt|soat)-[A-Za-z0-9_-]{20,}",
        keep: None,
        positives: &[("glpat-A1b2C3d4E5f6G7h8I9j0", "***")],
        negatives: &["glpat-short", "the glpat- prefix"],
    },
    SecretPattern {
        name: "slack_token",
        // xoxb-/xoxp-/... tokens carry a numeric team or user part; requiring
        // it keeps "xoxo-hugs-and-kisses" prose out.
        regex: r"(?-u:\b)(?:xox[abprsce]-[0-9]+-[A-Za-z0-9-]{8,}|xapp-[0-9]+-[A-Za-z0-9-]{10,})",
        keep: None,
        positives: &[
            ("xoxb-1234567890-abcdefghij", "***"),
            (
                "SLACK xoxp-1234-5678-90ab-cdefabcdef0123456789",
                "SLACK ***",
            ),
        ],
        negatives: &["xoxo-hugs-and-kisses-forever", "xoxb- is the bot prefix"],
    },
    SecretPattern {
        name: "slack_webhook",
        regex: r"https://hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9/_+-]+)",
        keep: None,
        positives: &[(
            "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
            "https://hooks.slack.com/services/***",
        )],
        negatives: &[
            "https://hooks.slack.com/ is where webhooks live",
            "https://api.slack.com/methods/chat.postMessage",
        ],
    },
    SecretPattern {
        name: "stripe_key",
        // Secret and restricted keys, and webhook signing secrets.
        // Publishable keys (`pk_live_`) are public by design.
        regex: r"(?-u:\b)(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})",
        keep: None,
        positives: &[
            ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "***"),
            ("key=rk_test_51HabcdefghijklmnopQR;", "key=***;"),
            ("whsec_abcdefghijklmnopqrstuvwxyz012345", "***"),
        ],
        negatives: &[
            "pk_live_4eC39HqLyjWDarjtT1zdp7dc",
            "sk_live_ is the prefix",
            "task_live_updates_enabled_for_all",
        ],
    },
    SecretPattern {
        name: "google_api_key",
        regex: r"(?-u:\b)AIza[0-9A-Za-z_-]{35}",
        keep: None,
        positives: &[(
            "maps key AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY here",
            "maps key *** here",
        )],
        negatives: &["AIza is the prefix", "AIzaShort123"],
    },
    SecretPattern {
        name: "jwt",
        regex: r"(?-u:\b)eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        keep: None,
        positives: &[(
            "id eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c end",
            "id *** end",
        )],
        negatives: &[
            "eyJhbGciOiJIUzI1NiJ9",
            "eyJ.a.b",
            "see eyJhbGciOiJIUzI1NiJ9.md",
        ],
    },
    SecretPattern {
        name: "named_secret_json",
        // "NAME": "value" (JSON, YAML flow). Only string values: masking a
        // bare null or number would break the JSON that carries it.
        regex: concat!(
            r#"""#,
            secret_name!(),
            r#""\s*:\s*""#,
            json_string_content!(),
            r#"""#
        ),
        keep: None,
        positives: &[
            (r#"{"api_key": "abc123"}"#, r#"{"api_key": "***"}"#),
            (
                r#"{"password": "a \"quoted\" one", "user": "bob"}"#,
                r#"{"password": "***", "user": "bob"}"#,
            ),
            (r#"{"accessToken":"x.y.z"}"#, r#"{"accessToken":"***"}"#),
        ],
        negatives: &[
            r#"{"max_tokens": 4096, "token_count": 12}"#,
            r#"{"api_key": null}"#,
            r#"{"tokens": "100", "primary_key": "id"}"#,
        ],
    },
    SecretPattern {
        name: "named_secret_quoted",
        // NAME = "value" / NAME: 'value' (also :=, =>): a quoted value is a
        // literal, so it is masked whatever it says.
        regex: concat!(
            r"(?-u:\b)",
            secret_name!(),
            r#"'?[ \t]*(?::=|=>|=|:)[ \t]*(?:""#,
            json_string_content!(),
            r#""|'([^'\r\n]+)')"#
        ),
        keep: None,
        positives: &[
            ("password: 'correct horse'", "password: '***'"),
            (
                r#"SECRET_KEY = "django-insecure-abc123""#,
                r#"SECRET_KEY = "***""#,
            ),
            ("{'api_key': 'my_api_key'}", "{'api_key': '***'}"),
        ],
        negatives: &[
            "token_type = 'bearer' if ok else None",
            r#"max_tokens = "4096""#,
        ],
    },
    SecretPattern {
        name: "named_secret_bare",
        // NAME=value, NAME: value, **NAME:** value, with a bare value that
        // ends at whitespace, a quote, a separator or a closing bracket.
        // A value followed by `(`, `[` or `{` is code (`password =
        // getpass.getpass()`), not a secret.
        regex: concat!(
            r"(?-u:\b)",
            secret_name!(),
            r"'?[ \t]*(?::=|=>|=|:)(?:\*\*|__)?[ \t]*",
            unquoted_value!(),
            r#"(?:[\s"'`,;&<>)}\]\\]|$)"#
        ),
        keep: Some(concat!(
            // Type names (`password: str`, `token: String`) and empty values.
            r"(?i:str|string|bytes|int|integer|number|bool|boolean|option|optional|any|secretstr|secretstring|secretbytes|none|null|nil|true|false|undefined|required)",
            // A reference to where the secret lives, not the secret:
            // `process.env.API_KEY`, `self.password`, `api_key`, `my_token`.
            r"|(?i:(?:[a-z_][a-z0-9_]*\.)+[a-z0-9_]*",
            r"(?:key|token|secret|password|passwd|credentials?))",
            r"|(?i:(?:[a-z0-9_]*_)?(?:api_?)?(?:key|token|secret|password|passwd|credentials?))",
            // A path: where a key file is, not what it holds.
            r"|(?:~|\.{1,2})?/.*",
        )),
        positives: &[
            ("DB_PASSWORD=hunter2hunter2", "DB_PASSWORD=***"),
            (
                "export OPENAI_API_KEY=abc123secretvalue",
                "export OPENAI_API_KEY=***",
            ),
            (
                "client_secret = Xy7_abc # note",
                "client_secret = *** # note",
            ),
            ("x-api-key: zzzzzzzzzzzz", "x-api-key: ***"),
            ("apiKey=AbC123xyz", "apiKey=***"),
            ("STRIPE_KEY=plainvalue", "STRIPE_KEY=***"),
            ("token: 12345678901234", "token: ***"),
            ("password: mysecret", "password: ***"),
            ("**Password:** hunter2", "**Password:** ***"),
            (
                "GET /login?user=bob&password=hunter2&next=/",
                "GET /login?user=bob&password=***&next=/",
            ),
            ("--db-password=s3cret", "--db-password=***"),
            ("(token=abc123)", "(token=***)"),
        ],
        negatives: &[
            "max_tokens: 4096",
            "token_count=12",
            "tokens: 100",
            "token: 100",
            "prompt_tokens=12 completion_tokens=7 total_tokens=19",
            "primary_key: id",
            "key: Enter",
            "monkey: banana",
            "keyboard: us",
            "passwords: 3",
            "key_id: abc",
            "POSTGRES_PASSWORD: ${POSTGRES_PASSWORD}",
            "api_key = <your key here>",
            "The key insight is that tokens are counted per turn.",
            "password = getpass.getpass()",
            "token = request.headers.get('X-Token')",
            "const API_KEY = process.env.API_KEY;",
            "self.api_key = api_key",
            "def login(username: str, password: str) -> Token:",
            "let token: String = fetch();",
            "refresh_token: null",
            "private_key: ~/.ssh/id_ed25519",
        ],
    },
];

#[cfg(test)]
#[path = "patterns_tests.rs"]
mod tests;
