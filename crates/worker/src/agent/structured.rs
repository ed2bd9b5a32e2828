//! The task's output contract: free text, the `report_back` tool, or the
//! provider's native schema mode, and the rules each one enforces.
//!
//! The schema is compiled once per task. With `report_back`, invalid calls
//! are answered with the violations so the model can try again, at most
//! [`MAX_INVALID_REPORT_BACK_CALLS`] times in total; a model that stops
//! without calling it gets one reminder. With the native mode the final
//! text must be JSON that matches the schema; there is no second chance,
//! because the provider was already enforcing the schema.

use serde_json::Value;
use subagent_protocol::{OutputMode, TaskSpec};
use subagent_tools::{
    REPORT_BACK_DESCRIPTION, REPORT_BACK_INSTRUCTION, REPORT_BACK_TOOL_NAME, ReportBackSchema,
    SchemaError, describe_violations,
};

use crate::provider::{NativeSchema, ToolDefinition};

/// Invalid `report_back` calls allowed per task, in total. Three gives the
/// model two chances to fix what the violation list tells it, without
/// letting a confused model burn the turn budget on retries.
pub const MAX_INVALID_REPORT_BACK_CALLS: u32 = 3;

/// Name given to the schema in native mode (OpenAI requires one matching
/// `[a-zA-Z0-9_-]+`).
const NATIVE_SCHEMA_NAME: &str = "result";

/// What the loop demands of the final output.
#[derive(Debug)]
pub(crate) enum OutputContract {
    /// No schema: the last assistant text is the output.
    FreeText,
    /// The model must call `report_back` with arguments matching the schema.
    ReportBack(ReportBackState),
    /// The provider enforces the schema; the final text is checked again.
    Native(ReportBackSchema),
}

/// Progress of the `report_back` contract.
#[derive(Debug)]
pub(crate) struct ReportBackState {
    schema: ReportBackSchema,
    invalid_calls: u32,
    reminded: bool,
    accepted: Option<Value>,
    last_rejection: String,
}

/// What to do when the model ends a turn without tool calls.
pub(crate) enum StopVerdict {
    /// The output is final; `structured` is the validated value, if any.
    Finished { structured: Option<Value> },
    /// Tell the model this and give it another turn.
    Remind(String),
    /// The run fails with `SUBAGENT_STRUCTURED_OUTPUT_INVALID`.
    Invalid(String),
}

/// How the model's `report_back` call is answered.
pub(crate) struct ReportBackAnswer {
    /// Text of the tool result.
    pub output: String,
    /// True when the call was rejected.
    pub is_error: bool,
}

impl OutputContract {
    /// The contract `spec` asks for; an unusable schema is an error.
    pub(crate) fn for_spec(spec: &TaskSpec) -> Result<Self, SchemaError> {
        let Some(schema_json) = &spec.output_schema_json else {
            return Ok(OutputContract::FreeText);
        };
        let schema = ReportBackSchema::compile(schema_json)?;
        Ok(match spec.output_mode {
            OutputMode::ReportBack => OutputContract::ReportBack(ReportBackState {
                schema,
                invalid_calls: 0,
                reminded: false,
                accepted: None,
                last_rejection: String::new(),
            }),
            OutputMode::Native => OutputContract::Native(schema),
        })
    }

    /// The `report_back` tool, when this contract offers it.
    pub(crate) fn tool_definition(&self) -> Option<ToolDefinition> {
        match self {
            OutputContract::ReportBack(state) => Some(ToolDefinition {
                name: REPORT_BACK_TOOL_NAME.to_owned(),
                description: REPORT_BACK_DESCRIPTION.to_owned(),
                parameters: state.schema.schema().clone(),
            }),
            _ => None,
        }
    }

    /// The schema for the provider to enforce, in native mode.
    pub(crate) fn native_schema(&self) -> Option<NativeSchema> {
        match self {
            OutputContract::Native(schema) => Some(NativeSchema {
                name: NATIVE_SCHEMA_NAME.to_owned(),
                schema: schema.schema().clone(),
            }),
            _ => None,
        }
    }

    /// The line appended to the system prompt, if any.
    pub(crate) fn system_prompt_line(&self) -> Option<&'static str> {
        match self {
            OutputContract::ReportBack(_) => Some(REPORT_BACK_INSTRUCTION),
            _ => None,
        }
    }

    /// The `report_back` state, when that tool is on offer.
    pub(crate) fn report_back(&mut self) -> Option<&mut ReportBackState> {
        match self {
            OutputContract::ReportBack(state) => Some(state),
            _ => None,
        }
    }

    /// Judges a turn that ended without tool calls, whose text is `text`.
    pub(crate) fn on_stop(&mut self, text: &str) -> StopVerdict {
        match self {
            OutputContract::FreeText => StopVerdict::Finished { structured: None },
            OutputContract::ReportBack(state) if !state.reminded => {
                state.reminded = true;
                StopVerdict::Remind(format!(
                    "You ended your turn without calling `{REPORT_BACK_TOOL_NAME}`. The task is \
                     only complete once you call `{REPORT_BACK_TOOL_NAME}` with the final result \
                     as its arguments, matching its parameters schema. Call it now."
                ))
            }
            OutputContract::ReportBack(_) => StopVerdict::Invalid(format!(
                "the model finished without calling {REPORT_BACK_TOOL_NAME}, even after one \
                 reminder; its last text is kept as the partial output. Ask for the structured \
                 result in the task, or use a model that calls tools reliably"
            )),
            OutputContract::Native(schema) => match check_native(schema, text) {
                Ok(value) => StopVerdict::Finished {
                    structured: Some(value),
                },
                Err(message) => StopVerdict::Invalid(message),
            },
        }
    }
}

impl ReportBackState {
    /// Checks one `report_back` call and says how to answer it.
    pub(crate) fn check(&mut self, arguments_json: &str) -> ReportBackAnswer {
        if self.accepted.is_some() {
            return ReportBackAnswer {
                output: "ignored: a valid report_back call was already accepted; the task is \
                         complete"
                    .to_owned(),
                is_error: false,
            };
        }
        let problems = match serde_json::from_str::<Value>(arguments_json) {
            Ok(value) => match self.schema.validate(&value) {
                Ok(()) => {
                    self.accepted = Some(value);
                    return ReportBackAnswer {
                        output: "result accepted; the task is complete".to_owned(),
                        is_error: false,
                    };
                }
                Err(violations) => format!(
                    "the arguments do not match the output schema:\n{}",
                    describe_violations(&violations)
                ),
            },
            Err(e) => format!("the arguments are not valid JSON: {e}"),
        };
        self.invalid_calls += 1;
        self.last_rejection = problems.clone();
        let next = if self.attempts_exhausted() {
            "No attempts are left; the run ends."
        } else {
            "Fix these and call report_back again."
        };
        ReportBackAnswer {
            output: format!(
                "report_back rejected (attempt {} of {MAX_INVALID_REPORT_BACK_CALLS}): \
                 {problems}\n{next}",
                self.invalid_calls
            ),
            is_error: true,
        }
    }

    /// The accepted result, once a call was valid.
    pub(crate) fn accepted(&self) -> Option<&Value> {
        self.accepted.as_ref()
    }

    /// True when no further invalid call is allowed.
    pub(crate) fn attempts_exhausted(&self) -> bool {
        self.invalid_calls >= MAX_INVALID_REPORT_BACK_CALLS
    }

    /// Why the run failed after the last allowed invalid call.
    pub(crate) fn exhausted_message(&self) -> String {
        format!(
            "the model made {} report_back calls that did not match the output schema and has \
             no attempts left; the last was rejected because {}",
            self.invalid_calls, self.last_rejection
        )
    }
}

fn check_native(schema: &ReportBackSchema, text: &str) -> Result<Value, String> {
    let value: Value = serde_json::from_str(text.trim()).map_err(|e| {
        format!(
            "the final answer is not valid JSON ({e}); in native structured-output mode the \
             model must answer with one JSON value matching the output schema"
        )
    })?;
    schema.validate(&value).map_err(|violations| {
        format!(
            "the final answer does not match the output schema:\n{}",
            describe_violations(&violations)
        )
    })?;
    Ok(value)
}
