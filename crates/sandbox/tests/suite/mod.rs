//! Declares the integration test modules.

mod capture;
mod cgroup_limits;
mod conversation;
mod deadline;
mod exit_status;
mod exit_watch;
mod freeze;
mod guard;
mod isolation;
mod layer;
mod leaks;
mod policy;
mod rlimits;
mod support;
mod tool_sandbox;
mod tool_sandbox_kernel;
mod tool_sandbox_limits;
mod tool_sandbox_net;
mod tool_sandbox_pinned;
mod tool_sandbox_support;
mod tool_sandbox_view;
