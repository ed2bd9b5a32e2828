use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use super::entry::{EnvValue, McpServerEntry};
use super::resolve::{McpResolveError, RunSide, resolve_server};

/// An executable file at `dir/name`.
fn program(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(dir).unwrap_or_default();
    std::fs::write(&path, "#!/bin/sh\n").unwrap_or_default();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap_or_default();
    path
}

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    workspace: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = std::fs::canonicalize(tmp.path()).unwrap_or_else(|e| panic!("{e}"));
    let workspace = root.join("ws");
    std::fs::create_dir_all(&workspace).unwrap_or_default();
    program(&root.join("venv/bin"), "mcp-server-time");
    Fixture {
        _tmp: tmp,
        root,
        workspace,
    }
}

fn env_of(pairs: Vec<(&'static str, String)>) -> impl Fn(&str) -> Option<String> {
    move |var: &str| {
        pairs
            .iter()
            .find(|(k, _)| *k == var)
            .map(|(_, v)| v.clone())
    }
}

fn resolve(
    f: &Fixture,
    entry: &McpServerEntry,
    key: Option<&str>,
    extra_env: Vec<(&'static str, String)>,
) -> Result<subagent_protocol::McpServerSpec, McpResolveError> {
    let mut pairs = vec![(
        "PATH",
        format!("{}:/usr/bin", f.root.join("venv/bin").display()),
    )];
    pairs.extend(extra_env);
    let env = env_of(pairs);
    let protected = vec!["OPENAI_API_KEY".to_owned(), "LOCAL_API_KEY".to_owned()];
    resolve_server(
        entry,
        None,
        &RunSide {
            workspace: &f.workspace,
            provider_key: key,
            protected_vars: &protected,
            env: &env,
        },
    )
}

/// `entry` resolved for a run in `f`'s workspace with `env` as its
/// environment, no provider key and no protected variables.
fn resolve_with(
    f: &Fixture,
    entry: &McpServerEntry,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<subagent_protocol::McpServerSpec, McpResolveError> {
    resolve_server(
        entry,
        None,
        &RunSide {
            workspace: &f.workspace,
            provider_key: None,
            protected_vars: &[],
            env,
        },
    )
}

fn entry(command: &str) -> McpServerEntry {
    McpServerEntry::new(
        "time",
        PathBuf::from("/cfg/config.toml"),
        command.to_owned(),
        Vec::new(),
    )
}

#[test]
fn a_server_resolves_to_its_program_on_path_with_its_installation_read_only() {
    let f = fixture();
    let mut e = entry("mcp-server-time");
    e.env = vec![
        ("TZ".into(), EnvValue::Literal("UTC".into())),
        ("TOKEN".into(), EnvValue::Passthrough),
        ("UNSET".into(), EnvValue::Passthrough),
    ];
    e.enabled_tools = Some(vec!["get_current_time".into()]);
    let spec = resolve(
        &f,
        &e,
        Some("sk-provider-key-123"),
        vec![("TOKEN", "t0k".into())],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        spec.command,
        f.root
            .join("venv/bin/mcp-server-time")
            .display()
            .to_string()
    );
    assert_eq!(spec.read_only, [f.root.join("venv").display().to_string()]);
    let env: Vec<(&str, &str)> = spec
        .env
        .iter()
        .map(|v| (v.name.as_str(), v.value.expose()))
        .collect();
    assert_eq!(
        env,
        [("TZ", "UTC"), ("TOKEN", "t0k")],
        "an unset passed-through variable is left out"
    );
    assert_eq!(spec.startup_timeout_ms, 10_000);
    assert!(spec.tools.offers("get_current_time") && !spec.tools.offers("convert_time"));
}

/// Attack: the operator's config passes the provider's key to a server
/// (by its variable, or by its value under another name): the run is
/// refused, naming the server and the variable.
#[test]
fn the_provider_key_never_reaches_a_server() {
    let f = fixture();
    let key = "sk-provider-key-123";
    let mut by_name = entry("mcp-server-time");
    by_name.env = vec![("OPENAI_API_KEY".into(), EnvValue::Passthrough)];
    let err = resolve(
        &f,
        &by_name,
        Some(key),
        vec![("OPENAI_API_KEY", key.into())],
    )
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert!(
        err.contains("`time`") && err.contains("OPENAI_API_KEY"),
        "{err}"
    );

    let mut expanded = entry("mcp-server-time");
    expanded.expands = true;
    expanded.env = vec![(
        "K".into(),
        EnvValue::Expand("Bearer ${LOCAL_API_KEY}".into()),
    )];
    assert!(matches!(
        resolve(
            &f,
            &expanded,
            Some(key),
            vec![("LOCAL_API_KEY", key.into())]
        ),
        Err(McpResolveError::ProviderKeyVariable { .. })
    ));

    let mut by_value = entry("mcp-server-time");
    by_value.env = vec![("OTHER".into(), EnvValue::Passthrough)];
    let err = resolve(&f, &by_value, Some(key), vec![("OTHER", key.into())]);
    assert!(
        matches!(err, Err(McpResolveError::ProviderKeyValue { ref what, .. }) if what == "OTHER"),
        "{err:?}"
    );

    let mut in_args = entry("mcp-server-time");
    in_args.args = vec![format!("--token={key}")];
    assert!(matches!(
        resolve(&f, &in_args, Some(key), vec![]),
        Err(McpResolveError::ProviderKeyValue { .. })
    ));
}

/// Attack: a server whose program lies in the workspace, which the model
/// can write (by path, or found on a PATH that holds the workspace).
#[test]
fn a_program_inside_the_workspace_is_refused() {
    let f = fixture();
    let planted = program(&f.workspace.join("bin"), "evil-server");
    let err = resolve(&f, &entry(&planted.display().to_string()), None, vec![]);
    assert!(
        matches!(err, Err(McpResolveError::CommandInWorkspace { .. })),
        "{err:?}"
    );
    let env = env_of(vec![(
        "PATH",
        f.workspace.join("bin").display().to_string(),
    )]);
    let err = resolve_with(&f, &entry("evil-server"), &env);
    assert!(
        matches!(err, Err(McpResolveError::CommandInWorkspace { .. })),
        "{err:?}"
    );
    // Through a link outside the workspace to a program inside it.
    let link = f.root.join("link-server");
    std::os::unix::fs::symlink(&planted, &link).unwrap_or_default();
    let err = resolve(&f, &entry(&link.display().to_string()), None, vec![]);
    assert!(
        matches!(err, Err(McpResolveError::CommandInWorkspace { .. })),
        "{err:?}"
    );
}

#[test]
fn a_missing_program_unset_variable_or_turned_off_tool_says_what_to_do() {
    let f = fixture();
    let err = resolve(&f, &entry("no-such-server"), None, vec![])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.contains("not found on PATH") && err.contains("install"),
        "{err}"
    );
    let err = resolve(&f, &entry("rel/x"), None, vec![])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("relative path"), "{err}");
    let mut e = entry("mcp-server-time");
    e.expands = true;
    e.env = vec![("T".into(), EnvValue::Expand("${NOPE}".into()))];
    let err = resolve(&f, &e, None, vec![])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("NOPE") && err.contains(":-default"), "{err}");
    e.env = vec![("T".into(), EnvValue::Expand("a${NOPE:-b}c${X}".into()))];
    let spec = resolve(&f, &e, None, vec![("X", "d".into())]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(spec.env[0].value.expose(), "abcd");
    let mut off = entry("mcp-server-time");
    off.disabled_tools = vec!["convert_time".into()];
    let env = env_of(vec![(
        "PATH",
        f.root.join("venv/bin").display().to_string(),
    )]);
    let err = resolve_server(
        &off,
        Some(&["convert_time".to_owned()]),
        &RunSide {
            workspace: &f.workspace,
            provider_key: None,
            protected_vars: &[],
            env: &env,
        },
    );
    assert!(
        matches!(err, Err(McpResolveError::ToolOff { .. })),
        "{err:?}"
    );
}

/// An executable script at `dir/name` run by `interpreter`.
fn script(dir: &Path, name: &str, interpreter: &str) -> PathBuf {
    let path = program(dir, name);
    std::fs::write(&path, format!("#!{interpreter}\nimport sys\n")).unwrap_or_default();
    path
}

/// A console script (`uv tool install`) runs under a Python managed
/// outside the system directories: the venv the script names and the
/// Python it links to are both given read-only.
#[test]
fn a_console_scripts_interpreter_installation_is_given_too() {
    let f = fixture();
    let python = program(&f.root.join("managed/cpython-3.12/bin"), "python3.12");
    let tool_venv = f.root.join("tools/time");
    std::fs::create_dir_all(tool_venv.join("bin")).unwrap_or_default();
    std::os::unix::fs::symlink(&python, tool_venv.join("bin/python")).unwrap_or_default();
    let server = script(
        &tool_venv.join("bin"),
        "mcp-server-time",
        &tool_venv.join("bin/python").display().to_string(),
    );
    let spec = resolve(&f, &entry(&server.display().to_string()), None, vec![])
        .unwrap_or_else(|e| panic!("{e}"));
    let given = |dir: PathBuf| spec.read_only.contains(&dir.display().to_string());
    assert!(given(tool_venv.clone()), "{:?}", spec.read_only);
    assert!(
        given(f.root.join("managed/cpython-3.12")),
        "{:?}",
        spec.read_only
    );

    // `#!/usr/bin/env NAME` is looked up on the run's PATH.
    let by_env = script(
        &f.root.join("venv/bin"),
        "by-env",
        "/usr/bin/env -S python3.12 -u",
    );
    let env = vec![(
        "PATH",
        format!(
            "{}:{}",
            f.root.join("venv/bin").display(),
            python.parent().unwrap_or(&f.root).display()
        ),
    )];
    let env = env_of(env);
    let spec = resolve_with(&f, &entry(&by_env.display().to_string()), &env)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        spec.read_only
            .contains(&f.root.join("managed/cpython-3.12").display().to_string()),
        "{:?}",
        spec.read_only
    );
}

/// Attack: a server installed outside the workspace whose `#!` line names
/// an interpreter inside it (directly, or through `env` and a PATH that
/// holds the workspace): the model could replace the interpreter, so the
/// run is refused like a program there.
#[test]
fn a_script_whose_interpreter_is_inside_the_workspace_is_refused() {
    let f = fixture();
    let planted = program(&f.workspace.join("bin"), "python3");
    let direct = script(
        &f.root.join("venv/bin"),
        "direct",
        &planted.display().to_string(),
    );
    let err = resolve(&f, &entry(&direct.display().to_string()), None, vec![]);
    assert!(
        matches!(&err, Err(McpResolveError::CommandInWorkspace { program, .. }) if *program == planted),
        "{err:?}"
    );
    let by_env = script(&f.root.join("venv/bin"), "by-env", "/usr/bin/env python3");
    let env = env_of(vec![(
        "PATH",
        format!(
            "{}:{}:/usr/bin",
            f.root.join("venv/bin").display(),
            f.workspace.join("bin").display()
        ),
    )]);
    let err = resolve_with(&f, &entry(&by_env.display().to_string()), &env);
    assert!(
        matches!(err, Err(McpResolveError::CommandInWorkspace { .. })),
        "{err:?}"
    );
}

/// Attack: a `#!` line naming its interpreter by a relative path, or a
/// bare name, which the kernel resolves against the server's working
/// directory: the workspace. The model could plant that interpreter, so
/// the run is refused like a program there.
#[test]
fn a_script_whose_interpreter_is_relative_is_refused() {
    let f = fixture();
    for shebang in [
        "python3-planted",
        "bin/python3-planted",
        "./python3-planted",
    ] {
        let server = script(&f.root.join("venv/bin"), "relative", shebang);
        let err = resolve(&f, &entry(&server.display().to_string()), None, vec![]);
        assert!(
            matches!(&err, Err(McpResolveError::CommandInWorkspace { program, .. })
                if program.starts_with(&f.workspace)),
            "{shebang}: {err:?}"
        );
    }
}
