use pretty_assertions::assert_eq;

use super::*;
use crate::Redactor;

fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn secret_looking_names_are_recognised() {
    for name in [
        "MY_SERVICE_TOKEN",
        "OPENAI_API_KEY",
        "GITHUB_TOKEN",
        "DB_PASSWORD",
        "AWS_SECRET_ACCESS_KEY",
        "GPG_PASSPHRASE",
        "gcp_credentials",
    ] {
        assert!(is_secret_env_name(name), "{name}");
    }
    for name in [
        "PATH",
        "HOME",
        "SSH_AUTH_SOCK",
        "PASSWORD_STORE_DIR",
        "SUBAGENT_MAX_TOKENS",
        "GOOGLE_APPLICATION_CREDENTIALS_FILE",
        "LANG",
    ] {
        assert!(!is_secret_env_name(name), "{name}");
    }
}

#[test]
fn only_long_non_numeric_non_path_values_are_taken() {
    let got = secret_env_values(vars(&[
        ("MY_SERVICE_TOKEN", "zq8-Frobnicate-Wibble"),
        ("TOKENIZERS_PARALLELISM", "false"),
        ("API_KEY_RETRIES", "123456789"),
        ("SIGNING_KEY_LOCATION", "/etc/keys/signing.pem"),
        ("PATH", "/usr/bin:/bin-and-long-enough"),
    ]));
    assert_eq!(got, vec!["zq8-Frobnicate-Wibble".to_owned()]);
}

#[test]
fn injected_environment_values_are_masked_anywhere() {
    let redactor = Redactor::with_env_vars(
        Vec::new(),
        vars(&[
            ("MY_SERVICE_TOKEN", "zq8-Frobnicate-Wibble"),
            ("LANG", "C.UTF-8-long"),
        ]),
    );
    assert_eq!(redactor.known_values(), 1);
    assert_eq!(
        redactor.redact("the answer is zq8-Frobnicate-Wibble in C.UTF-8-long"),
        "the answer is *** in C.UTF-8-long"
    );
}
