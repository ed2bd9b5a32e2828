//! `subagent config show|path`: the merged configuration with where each
//! value came from (secrets masked), and where the config files are.
//! Reading and merging live in `subagent_supervisor::config`.

use std::path::PathBuf;

use crate::exit::Ending;
use anyhow::Result;
use serde_json::json;
use subagent_supervisor::config::{
    LoadedConfig, ProjectConfig, ProjectFileKind, TrustVerdict, default_user_config_path,
    describe_config, find_project_config, load_config, project_config_home,
};

use super::run_flags::env_value;
use super::trust::{load_project, workspace_or_cwd};
use crate::console;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "FILES (a project value overrides the user's; a flag overrides both):\n  \
    user     $XDG_CONFIG_HOME/subagent/config.toml (default ~/.config/subagent/config.toml)\n  \
    project  .subagent/config.toml in the workspace or a parent, up to the repository root;\n           \
    read only once trusted (`subagent trust`), and ignored again when it changes\n\n\
    EXAMPLE config.toml:\n  \
    default_provider = \"local\"\n  \
    default_agent = \"general\"\n\n  \
    [providers.local]\n  \
    kind = \"openai-chat\"              # openai-chat, openai-responses, anthropic, vertexai-anthropic\n  \
    base_url = \"http://127.0.0.1:8080/v1\"\n  \
    model = \"smollm2\"\n  \
    api_key_env = \"LOCAL_API_KEY\"     # the variable's name; keys never go in the file\n  \
    price = { input = 0.15, output = 0.60 }   # $ per million tokens\n\n  \
    [limits]                          # the names of `subagent run`'s limit flags\n  \
    timeout = \"15m\"\n  \
    memory = \"1G\"\n  \
    max_turns = 30\n\n  \
    [subagents]\n  \
    enabled = true                    # false refuses every run (SUBAGENTS_DISABLED)\n\n\
    Without any file, OPENAI_API_KEY / OPENAI_BASE_URL and ANTHROPIC_API_KEY /\n\
    ANTHROPIC_BASE_URL are used as the SDKs use them.\n\n\
    EXAMPLES:\n  \
    subagent config path\n  \
    subagent config show\n  \
    subagent config show --workspace ./project --json"
)]
pub(super) struct ConfigArgs {
    #[command(subcommand)]
    command: ConfigCommand,
}

#[derive(Debug, clap::Subcommand)]
enum ConfigCommand {
    /// Print every setting with its value and where it came from (default,
    /// user config, project config, environment); keys are masked.
    #[command(after_help = "EXAMPLES:\n  \
        subagent config show\n  \
        subagent config show --workspace ./project --json")]
    Show {
        /// Directory whose project config to read (default: the current directory).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Print where the user and project config files are (or would be).
    #[command(after_help = "EXAMPLES:\n  \
        subagent config path\n  \
        $EDITOR \"$(subagent config path --project)\"")]
    Path {
        /// Directory whose project config to find (default: the current directory).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Print only the user file's path.
        #[arg(long, conflicts_with = "project")]
        user: bool,
        /// Print only the project file's path (where it is, else where it would go).
        #[arg(long)]
        project: bool,
    },
}

pub(super) fn run(args: ConfigArgs) -> Result<Ending> {
    match args.command {
        ConfigCommand::Show { workspace, json } => {
            let workspace = workspace_or_cwd(workspace)?;
            let user_path = default_user_config_path();
            let project = load_project(&workspace)?;
            let config = load_config(&project, user_path.as_deref())?;
            let values = describe_config(&config, &env_value);
            let files = [
                ("user", user_state(&config, user_path)),
                ("project", project_state(&project)),
                ("trust", trust_state(&project)),
            ];
            // The last guard: nothing shown has a secret's shape, whatever
            // a file put in a name, a model or a path.
            let mask = |text: &str| subagent_redact::mask_patterns(text).into_owned();
            if json {
                let report = json!({
                    "files": files.iter().map(|(w, s)| json!({"scope": w, "file": mask(s)})).collect::<Vec<_>>(),
                    "values": values.iter().map(|v| json!({
                        "key": mask(&v.key), "value": mask(&v.value), "source": mask(&v.origin.to_string()),
                    })).collect::<Vec<_>>(),
                });
                console::out(&serde_json::to_string_pretty(&report)?)?;
            } else {
                let mut text = String::new();
                for (which, state) in &files {
                    text.push_str(&format!("# {which:<7} {state}\n"));
                }
                let width = values
                    .iter()
                    .map(|v| v.key.len() + v.value.chars().count() + 3)
                    .max()
                    .unwrap_or(0);
                for v in &values {
                    let pair = format!("{} = {}", v.key, v.value);
                    text.push_str(&format!("{pair:<width$}  # {}\n", v.origin));
                }
                console::out(&mask(text.trim_end()))?;
            }
            Ok(Ending::Success)
        }
        ConfigCommand::Path {
            workspace,
            user,
            project,
        } => {
            let workspace = workspace_or_cwd(workspace)?;
            let user_path = default_user_config_path();
            let project_path = find_project_config(&workspace);
            let project_state = match &project_path {
                Some(p) => (p.clone(), true),
                None => (project_config_home(&workspace), false),
            };
            if user {
                match &user_path {
                    Some(p) => console::out(&p.display().to_string())?,
                    None => {
                        console::err("no user config path: set HOME or XDG_CONFIG_HOME");
                        return Ok(Ending::InputRefused);
                    }
                }
            } else if project {
                console::out(&project_state.0.display().to_string())?;
            } else {
                let exists = |found: bool| if found { "" } else { " (not found)" };
                match &user_path {
                    Some(p) => {
                        console::out(&format!("user     {}{}", p.display(), exists(p.is_file())))?
                    }
                    None => console::out("user     none (set HOME or XDG_CONFIG_HOME)")?,
                }
                console::out(&format!(
                    "project  {}{}",
                    project_state.0.display(),
                    exists(project_state.1)
                ))?;
            }
            Ok(Ending::Success)
        }
    }
}

/// The user file's line of `config show`.
fn user_state(config: &LoadedConfig, user_path: Option<PathBuf>) -> String {
    match (&config.user, user_path) {
        (Some(layer), _) => layer.path.display().to_string(),
        (None, Some(path)) => format!("{} (not found)", path.display()),
        (None, None) => "none found".to_owned(),
    }
}

/// The project file's line of `config show`: whether it counts.
fn project_state(project: &ProjectConfig) -> String {
    let Some(file) = project
        .files()
        .iter()
        .find(|f| f.kind == ProjectFileKind::Config)
    else {
        return "none found".to_owned();
    };
    match project.verdict() {
        TrustVerdict::Trusted => format!("{} (trusted)", file.path.display()),
        TrustVerdict::NoFiles | TrustVerdict::Untrusted(_) => format!(
            "{} (IGNORED: not trusted; `{}` to use it)",
            file.path.display(),
            project.trust_command()
        ),
    }
}

/// The trust line of `config show`: the project's files and the record.
fn trust_state(project: &ProjectConfig) -> String {
    let record = project.store.as_ref().map_or_else(
        || "no record (set HOME)".to_owned(),
        |p| p.display().to_string(),
    );
    let files = project.files().len();
    match project.verdict() {
        TrustVerdict::NoFiles => format!("no project files to trust (record {record})"),
        TrustVerdict::Trusted => format!(
            "project {} trusted: {files} file(s) loaded (record {record})",
            project.root.display()
        ),
        TrustVerdict::Untrusted(changes) => format!(
            "project {} NOT trusted: {files} file(s) ignored, {} differ from the record \
             (record {record})",
            project.root.display(),
            changes.len()
        ),
    }
}
