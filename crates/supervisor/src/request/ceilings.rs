//! The operator's settings as ceilings: a request that arrives through a
//! server (`serve --stdio`, `serve --mcp`), a `call` payload, a batch with
//! `--ceilings-from-flags`, or a worker's nested `subagent` call may lower
//! any limit, budget, depth, tool set or switch of the run the operator
//! started, never raise it.
//!
//! One rule everywhere: what a request names above its ceiling is refused
//! ([`CeilingError`], `INVALID_INPUT` to the caller) naming the limit, the
//! value asked and the ceiling; what the request did not name but came
//! with the agent it chose (the agent file's limits, its tool list) is
//! brought down to the ceiling without a word, since the caller asked for
//! nothing more. Only what the operator lists in [`RaiseSettings`] may go
//! above.
//!
//! Pure: resolved requests in, a request brought under its ceilings or an
//! error out. It reads no file (but the workspace's real path) and starts
//! nothing.

use std::path::{Path, PathBuf};

use subagent_protocol::{ProviderSpec, tool_names};

use super::ceiling_error::{CeilingError, Owner};
use super::run_request::RunRequest;
use crate::config::{LimitKey, LimitSet, LimitValue, Raise, RaiseSettings};
use crate::layer::{ApplyMode, WorkspaceIsolation};

/// What a request named itself, as opposed to what it inherits from the
/// agent it chose.
#[derive(Debug, Clone, Copy)]
pub struct Asked<'a> {
    /// The limits the request names.
    pub limits: &'a LimitSet,
    /// True when the request names its tools (`RunRequest::tools` is the ask).
    pub tools: bool,
    /// The tool list of the agent the request runs (used when it names none).
    pub agent_tools: &'a [String],
}

/// The operator's run: every ceiling a request is held to.
#[derive(Debug, Clone)]
pub struct Ceilings {
    operator: RunRequest,
    tools: Vec<String>,
    workspace: PathBuf,
    raise: RaiseSettings,
    owner: Owner,
}

impl Ceilings {
    /// The ceilings of `operator` (the run the flags, config files and the
    /// operator's agent make) whose tool set is `tools` (its `--tools`, else
    /// its agent's list).
    pub fn new(
        operator: RunRequest,
        tools: Vec<String>,
        raise: RaiseSettings,
        owner: Owner,
    ) -> Self {
        let workspace = std::fs::canonicalize(&operator.workspace_dir)
            .unwrap_or_else(|_| operator.workspace_dir.clone());
        Self {
            operator,
            tools,
            workspace,
            raise,
            owner,
        }
    }

    /// The operator's run these ceilings come from.
    pub fn operator(&self) -> &RunRequest {
        &self.operator
    }

    /// Each ceiling as `(name, value)`, for `config show` and logs.
    pub fn describe(&self) -> Vec<(String, String)> {
        let op = &self.operator;
        let mut out: Vec<(String, String)> = LimitKey::ALL
            .iter()
            .map(|&key| {
                let value = key
                    .value_in(&op.limits, &op.budget, op.max_depth)
                    .map_or_else(|| "unlimited".to_owned(), |v| v.to_string());
                (key.config_key().to_owned(), value)
            })
            .collect();
        out.push(("tools".into(), quoted(&self.tools)));
        out.push(("network".into(), on_off(op.allow_network)));
        out.push(("isolation".into(), op.isolation.to_string()));
        out.push(("apply".into(), op.apply.to_string()));
        out.push((
            "private_networks".into(),
            on_off(op.web.allow_private_networks),
        ));
        out.push((
            "link_local_networks".into(),
            on_off(op.web.allow_link_local_networks),
        ));
        out.push(("model".into(), self.allowed_models().join(", ")));
        out.push(("workspace".into(), self.workspace.display().to_string()));
        let raise: Vec<String> = self
            .raise
            .allow_raise
            .iter()
            .map(|r| r.name().to_owned())
            .collect();
        out.push((
            "allow_raise".into(),
            if raise.is_empty() {
                "nothing".into()
            } else {
                raise.join(", ")
            },
        ));
        out
    }

    /// Brings `request` under these ceilings: what `asked` names above one
    /// is refused; what came with the chosen agent is lowered to it.
    pub fn admit(&self, request: &mut RunRequest, asked: &Asked<'_>) -> Result<(), CeilingError> {
        self.admit_limits(request, asked.limits)?;
        self.admit_tools(request, asked)?;
        self.admit_switches(request)?;
        self.admit_provider(&request.provider)?;
        self.admit_workspace(&request.workspace_dir)
    }

    fn raises(&self, what: Raise) -> bool {
        self.raise.allows(what)
    }

    fn admit_limits(&self, request: &mut RunRequest, named: &LimitSet) -> Result<(), CeilingError> {
        let op = &self.operator;
        let mut lowered = LimitSet::default();
        for key in LimitKey::ALL {
            if self.raises(Raise::Limit(key)) {
                continue;
            }
            let Some(ceiling) = key.value_in(&op.limits, &op.budget, op.max_depth) else {
                continue; // no ceiling (an unlimited budget)
            };
            let asked = key.value_in(&request.limits, &request.budget, request.max_depth);
            if !above(asked, ceiling) {
                continue;
            }
            if named.get(key).is_some() {
                return Err(CeilingError::Limit {
                    key,
                    asked: asked.map_or_else(|| "unlimited".to_owned(), |v| v.to_string()),
                    ceiling: ceiling.to_string(),
                    owner: self.owner,
                    advice: self
                        .owner
                        .lift(key.config_key(), &format!("a higher {}", key.flag())),
                });
            }
            lowered.set(key, ceiling);
        }
        lowered.apply(
            &mut request.limits,
            &mut request.budget,
            &mut request.max_depth,
        );
        Ok(())
    }

    fn admit_tools(&self, request: &mut RunRequest, asked: &Asked<'_>) -> Result<(), CeilingError> {
        if self.raises(Raise::Tools) {
            return Ok(());
        }
        let wanted: &[String] = match (&request.tools, asked.tools) {
            (Some(tools), true) => tools,
            _ => asked.agent_tools,
        };
        // A name that is no tool at all is left to admission, whose
        // refusal lists every known tool.
        let extra: Vec<String> = wanted
            .iter()
            .filter(|t| !self.covers(t) && is_known_tool(t))
            .cloned()
            .collect();
        if extra.is_empty() {
            return Ok(());
        }
        if asked.tools {
            return Err(CeilingError::Tools {
                extra: quoted(&extra),
                allowed: quoted(&self.tools),
                owner: self.owner,
                advice: self.owner.lift("tools", "more --tools"),
            });
        }
        // The agent's own list: the caller asked for nothing, so it runs
        // with the part of it the operator allows.
        request.tools = Some(wanted.iter().filter(|t| self.covers(t)).cloned().collect());
        Ok(())
    }

    /// Whether the ceiling's tools allow `tool`: it lists it, or, for an
    /// MCP tool, its whole server (`mcp__NAME` covers `mcp__NAME__TOOL`).
    fn covers(&self, tool: &str) -> bool {
        self.tools.iter().any(|t| t == tool) || crate::mcp::mcp_covered(&self.tools, tool)
    }

    fn admit_switches(&self, request: &RunRequest) -> Result<(), CeilingError> {
        let op = &self.operator;
        let switch = |switch, raise, flag: &str| CeilingError::Switch {
            switch,
            owner: self.owner,
            advice: self.owner.lift(raise, flag),
        };
        // Not raisable: an operator who wants callers to write in place
        // says so for every run.
        let fixed = |switch, flag: &str| CeilingError::Switch {
            switch,
            owner: self.owner,
            advice: match self.owner {
                Owner::Parent => "a child keeps its parent's isolation and apply".to_owned(),
                _ => format!("leave it out, or have the operator start with {flag}"),
            },
        };
        if request.isolation == WorkspaceIsolation::None && op.isolation != WorkspaceIsolation::None
        {
            return Err(fixed(
                "in-place writes (isolation none)",
                "--isolation none",
            ));
        }
        if request.apply == ApplyMode::OnSuccess && op.apply == ApplyMode::Never {
            return Err(fixed(
                "applying changes (apply on-success)",
                "--apply on-success",
            ));
        }
        if request.allow_network && !op.allow_network && !self.raises(Raise::Network) {
            return Err(switch("network", "network", "--allow-network"));
        }
        if request.web.allow_private_networks
            && !op.web.allow_private_networks
            && !self.raises(Raise::PrivateNetworks)
        {
            return Err(switch(
                "private networks",
                "private_networks",
                "--allow-private-networks",
            ));
        }
        if request.web.allow_link_local_networks
            && !op.web.allow_link_local_networks
            && !self.raises(Raise::LinkLocalNetworks)
        {
            return Err(switch(
                "link-local networks",
                "link_local_networks",
                "--allow-link-local-networks",
            ));
        }
        if request.provider.reasoning && !op.provider.reasoning && !self.raises(Raise::Reasoning) {
            return Err(switch("reasoning", "reasoning", "--reasoning"));
        }
        if let Some(ceiling) = op.provider.max_tokens
            && !self.raises(Raise::MaxTokens)
            && request
                .provider
                .max_tokens
                .is_none_or(|asked| asked > ceiling)
        {
            return Err(CeilingError::MaxTokens {
                asked: request
                    .provider
                    .max_tokens
                    .map_or_else(|| "unlimited".to_owned(), |n| n.to_string()),
                ceiling,
                owner: self.owner,
                advice: self.owner.lift("max_tokens", "a higher --max-tokens"),
            });
        }
        Ok(())
    }

    fn admit_provider(&self, asked: &ProviderSpec) -> Result<(), CeilingError> {
        let op = &self.operator.provider;
        let same_endpoint =
            asked.kind == op.kind && asked.base_url == op.base_url && asked.api_key == op.api_key;
        if !same_endpoint && !self.raises(Raise::Provider) {
            return Err(CeilingError::Provider {
                asked: endpoint(asked),
                ceiling: endpoint(op),
                owner: self.owner,
                advice: self.owner.lift("provider", "--provider"),
            });
        }
        if !self.raises(Raise::Model) && !self.allowed_models().contains(&asked.model) {
            return Err(CeilingError::Model {
                asked: asked.model.clone(),
                allowed: quoted(&self.allowed_models()),
                owner: self.owner,
                advice: match self.owner {
                    Owner::Parent => "the parent's model is the only one".to_owned(),
                    _ => "list it in [serve] allowed_models of the user config, or start it with that --model".to_owned(),
                },
            });
        }
        Ok(())
    }

    fn allowed_models(&self) -> Vec<String> {
        let mut models = vec![self.operator.provider.model.clone()];
        models.extend(
            self.raise
                .allowed_models
                .iter()
                .filter(|m| **m != self.operator.provider.model)
                .cloned(),
        );
        models
    }

    fn admit_workspace(&self, asked: &Path) -> Result<(), CeilingError> {
        if asked == self.operator.workspace_dir {
            return Ok(());
        }
        let real = std::fs::canonicalize(asked).map_err(|e| CeilingError::WorkspaceUnreadable {
            asked: asked.to_owned(),
            ceiling: self.workspace.clone(),
            reason: e.to_string(),
        })?;
        if real.starts_with(&self.workspace) {
            Ok(())
        } else {
            Err(CeilingError::Workspace {
                asked: asked.to_owned(),
                ceiling: self.workspace.clone(),
                owner: self.owner,
            })
        }
    }
}

fn is_known_tool(name: &str) -> bool {
    name == tool_names::SUBAGENT
        || tool_names::BUILTIN_TOOLS.contains(&name)
        || crate::mcp::is_mcp_name(name)
}

/// True when `asked` is more than `ceiling` (`None`: unlimited).
fn above(asked: Option<LimitValue>, ceiling: LimitValue) -> bool {
    match (asked, ceiling) {
        (None, _) => true,
        (Some(LimitValue::Ms(a)), LimitValue::Ms(c))
        | (Some(LimitValue::Bytes(a)), LimitValue::Bytes(c))
        | (Some(LimitValue::Count(a)), LimitValue::Count(c)) => a > c,
        (Some(LimitValue::Dollars(a)), LimitValue::Dollars(c)) => a > c,
        // Kinds never differ for one key; treat a mismatch as above.
        (Some(_), _) => true,
    }
}

fn endpoint(p: &ProviderSpec) -> String {
    format!(
        "{} at {}",
        p.kind.as_str(),
        subagent_redact::mask_patterns(&p.base_url)
    )
}

fn on_off(on: bool) -> String {
    if on { "on" } else { "off" }.to_owned()
}

fn quoted(names: &[String]) -> String {
    if names.is_empty() {
        return "none".to_owned();
    }
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
#[path = "ceilings_tests.rs"]
mod tests;
