pub mod support;

mod supervisor_faults;
mod supervisor_limits;
mod supervisor_success;
