//! The one integration-test binary of cdkd-engine: pure tests, run in parallel.

mod callbacks;
mod child_executions;
mod choice;
mod common;
mod definitions_valid;
mod fail_states;
mod history;
mod io_processing;
mod map_parallel;
mod refusals;
mod task_retry_catch;
mod wait_fail_succeed;
