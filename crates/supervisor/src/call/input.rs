//! The stdin JSON of `subagent call`: `model, provider, url, api_key_name,
//! prompt, system_prompt, tool_subset, think, temperature, max_tokens` and
//! an optional `output_schema`, as the call_subagent tool writes it.
//!
//! Unknown fields are refused (a misspelt field would otherwise be dropped
//! without a word); `null` and `""` mean "not given", so the command's flags
//! and the config decide.
//!
//! The command's flags are ceilings: a provider, URL, model or key variable
//! the flags pin cannot be changed by the payload ([`CallInput::check_pinned`]),
//! and `tool_subset`, `think` and `max_tokens` are held under the flags'
//! by [`crate::request::Ceilings`]. What the flags leave open the payload
//! chooses, as the call_subagent contract says, but never where the
//! operator's keys go ([`CallInput::check_operator_keys`]): a provider of
//! the operator's config keeps its URL and key variable, and `api_key_name`
//! names only the provider kind's own variable or one the operator allows.

use serde::Deserialize;
use serde_json::Value;

use subagent_protocol::ProviderKind;

use crate::config::{
    ConfiguredProvider, Origin, Raise, RaiseSettings, RunOverrides, api_base_url, kind_defaults,
};
use crate::run::RunRequest;

/// Why the stdin JSON cannot be run.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// Not JSON, or not the call object. Not a `source`: the message
    /// already says it, and a chained report would say it twice.
    #[error("stdin is not a call request: {0}")]
    Json(serde_json::Error),
    /// `prompt` missing or blank.
    #[error("`prompt` is empty: give the task for the subagent")]
    EmptyPrompt,
    /// `output_schema` is not a JSON object.
    #[error("`output_schema` must be a JSON Schema object")]
    SchemaNotObject,
    /// A field names another value than the flag that pins it.
    #[error(
        "`{field}` is `{asked}`, but `subagent call` was started with {flag} {pinned}, which a \
         request cannot change: leave `{field}` out or give that value, or run `subagent call` \
         with `--allow-raise {raise}`"
    )]
    Pinned {
        /// The payload's field.
        field: &'static str,
        /// Its value (never a key: fields hold names and URLs).
        asked: String,
        /// The flag.
        flag: &'static str,
        /// The flag's value.
        pinned: String,
        /// The name that lets it be raised.
        raise: &'static str,
    },
    /// A field would change where a provider of the operator's config
    /// sends its key.
    #[error(
        "`{field}` is `{asked}`, but the provider `{provider}` comes from the operator's config \
         and a request cannot change its {what}, which would carry the operator's key elsewhere: \
         leave `{field}` out, or name a provider kind (`provider`: openai-chat, \
         openai-responses, anthropic, vertexai-anthropic) with its own `url`"
    )]
    OperatorProvider {
        /// The payload's field (`url` or `api_key_name`).
        field: &'static str,
        /// Its value (a URL or a variable's name, never a key).
        asked: String,
        /// The configured provider's name.
        provider: String,
        /// What the field would change, for the message.
        what: &'static str,
    },
    /// `api_key_name` names a variable the operator did not allow.
    #[error(
        "`api_key_name` is `{asked}`, which is not the key variable of provider kind {kind} \
         ({own}) nor one the operator allows: leave it out or name {own}; the operator allows \
         another with `subagent call --api-key-env {asked}` or `[call] allowed_api_key_env = \
         [\"{asked}\"]` in the user config"
    )]
    KeyVariable {
        /// The variable the payload named.
        asked: String,
        /// The run's provider kind.
        kind: ProviderKind,
        /// The kind's own variable.
        own: &'static str,
    },
}

/// One call request.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallInput {
    /// Model id; the parent's model in the seed's caller.
    pub model: Option<String>,
    /// Provider name or kind: `openai-chat`, `anthropic`, `vertexai-anthropic`, ...
    pub provider: Option<String>,
    /// The provider's base URL (for `vertexai-anthropic`, the location URL)
    /// or the full endpoint URL under it (see [`api_base_url`]).
    pub url: Option<String>,
    /// Name of the variable holding the key (never the key itself).
    pub api_key_name: Option<String>,
    /// The task.
    #[serde(default)]
    pub prompt: String,
    /// Replaces the agent's system prompt.
    pub system_prompt: Option<String>,
    /// Built-in tools the child may call; `[]` for none.
    pub tool_subset: Option<Vec<String>>,
    /// Ask for reasoning / thinking.
    pub think: Option<bool>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Output tokens per turn.
    pub max_tokens: Option<u32>,
    /// JSON Schema the answer must satisfy.
    pub output_schema: Option<Value>,
}

/// `Some` of a non-blank string.
fn given(value: &Option<String>) -> Option<String> {
    value.as_ref().filter(|v| !v.trim().is_empty()).cloned()
}

impl CallInput {
    /// Parses and checks the stdin text.
    pub fn parse(text: &str) -> Result<Self, CallError> {
        let input: CallInput = serde_json::from_str(text).map_err(CallError::Json)?;
        if input.prompt.trim().is_empty() {
            return Err(CallError::EmptyPrompt);
        }
        if input.output_schema.as_ref().is_some_and(|s| !s.is_object()) {
            return Err(CallError::SchemaNotObject);
        }
        Ok(input)
    }

    /// Refuses a provider, URL, model or key variable that differs from
    /// what the command's flags (`flags`) pin, unless `raise` lets callers
    /// choose it. URLs are compared as the base URLs of `kind` (the run's
    /// provider kind), so a parent's full endpoint URL repeats a pinned
    /// `--base-url` of the same server.
    pub fn check_pinned(
        &self,
        flags: &RunOverrides,
        raise: &RaiseSettings,
        kind: ProviderKind,
    ) -> Result<(), CallError> {
        let model_free = raise.allows(Raise::Model);
        let provider_free = raise.allows(Raise::Provider);
        let fields = [
            (
                "model",
                &self.model,
                "--model",
                &flags.model,
                model_free,
                Raise::Model,
            ),
            (
                "provider",
                &self.provider,
                "--provider",
                &flags.provider,
                provider_free,
                Raise::Provider,
            ),
            (
                "url",
                &self.url,
                "--base-url",
                &flags.base_url,
                provider_free,
                Raise::Provider,
            ),
            (
                "api_key_name",
                &self.api_key_name,
                "--api-key-env",
                &flags.api_key_env,
                provider_free,
                Raise::Provider,
            ),
        ];
        let same = |field: &str, asked: &str, pinned: &str| {
            if field == "url" {
                api_base_url(kind, asked) == api_base_url(kind, pinned)
            } else {
                asked == pinned
            }
        };
        for (field, asked, flag, pinned, free, raise_name) in fields {
            if let (Some(asked), Some(pinned)) = (given(asked), pinned)
                && !free
                && !same(field, &asked, pinned)
                && !(field == "model" && raise.allowed_models.contains(&asked))
            {
                return Err(CallError::Pinned {
                    field,
                    asked,
                    flag,
                    pinned: pinned.clone(),
                    raise: raise_name.name(),
                });
            }
        }
        Ok(())
    }

    /// Refuses a request that would send one of the operator's keys where
    /// the operator did not say: with a provider of the operator's config
    /// (`configured`, whether `--provider`, the payload, the agent or
    /// `default_provider` named it), a `url` or `api_key_name` other than
    /// its own (or the flags'); otherwise an `api_key_name` other than the
    /// kind's own variable, `--api-key-env`, or one of `allowed` (the user
    /// config's `[call] allowed_api_key_env`). `--allow-raise provider`
    /// lifts neither: the payload may then choose a provider kind and its
    /// URL, not redirect the operator's.
    pub fn check_operator_keys(
        &self,
        flags: &RunOverrides,
        configured: Option<&ConfiguredProvider>,
        kind: ProviderKind,
        allowed: &[String],
    ) -> Result<(), CallError> {
        let own_variable = kind_defaults(kind).api_key_var;
        if let Some(provider) = configured {
            if let Some(url) = given(&self.url) {
                let own = flags.base_url.as_ref().or(provider.base_url.as_ref());
                if own.is_none_or(|own| api_base_url(kind, own) != api_base_url(kind, &url)) {
                    return Err(CallError::OperatorProvider {
                        field: "url",
                        asked: url,
                        provider: provider.name.clone(),
                        what: "URL",
                    });
                }
            }
            if let Some(var) = given(&self.api_key_name) {
                let own = flags
                    .api_key_env
                    .as_deref()
                    .or(provider.api_key_env.as_deref())
                    .unwrap_or(own_variable);
                if var != own {
                    return Err(CallError::OperatorProvider {
                        field: "api_key_name",
                        asked: var,
                        provider: provider.name.clone(),
                        what: "key variable",
                    });
                }
            }
            return Ok(());
        }
        if let Some(var) = given(&self.api_key_name)
            && var != own_variable
            && flags.api_key_env.as_deref() != Some(var.as_str())
            && !allowed.contains(&var)
        {
            return Err(CallError::KeyVariable {
                asked: var,
                kind,
                own: own_variable,
            });
        }
        Ok(())
    }

    /// `base` (the command's flags) with what this request names instead.
    pub fn overrides(&self, base: RunOverrides) -> RunOverrides {
        let mut patched = crate::request::RequestPatch {
            model: given(&self.model),
            provider: given(&self.provider),
            base_url: given(&self.url),
            api_key_env: given(&self.api_key_name),
            ..Default::default()
        }
        .apply(&base);
        if given(&self.api_key_name).is_some() {
            // An unset variable is blamed on the field that named it.
            patched.api_key_env_origin = Some(Origin::RequestField("api_key_name".into()));
        }
        patched
    }

    /// Puts the task and the request's own settings into `request`.
    pub fn apply(&self, request: &mut RunRequest) {
        crate::request::RequestPatch {
            task: Some(self.prompt.clone()),
            system_prompt: given(&self.system_prompt),
            tools: self.tool_subset.clone(),
            reasoning: self.think,
            temperature: self.temperature,
            max_tokens: self.max_tokens,
            output_schema_json: self.output_schema.as_ref().map(Value::to_string),
            ..Default::default()
        }
        .apply_to(request);
    }
}

#[cfg(test)]
#[path = "input_tests.rs"]
mod tests;
