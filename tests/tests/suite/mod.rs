pub mod fault_proxy;
pub mod llama;
pub mod scripted_model;
pub mod support;

mod agents_cmd;
mod batch_cmd;
mod cli;
mod cli_flags;
mod config_cmd;
mod doctor;
mod e2e_llama;
mod masking;
mod model_faults;
mod modes;
mod nested_e2e;
mod serve_mcp;
mod sessions_cmd;
mod sessions_html;
mod sessions_replay;
mod status_line;

mod supervisor_admission;
mod supervisor_faults;
mod supervisor_limits;
mod supervisor_success;
mod supervisor_watch;
mod tools_e2e;
mod web_tools_e2e;
