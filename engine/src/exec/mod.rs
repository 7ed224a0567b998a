//! The interpreter: runs a graph of states with Step Functions' input/output processing,
//! Retry, Catch, Map, Parallel and the context object.
//!
//! `run` holds an execution and its events, `io` a state's input and output processing,
//! `states` the states without work of their own, `retry` Retry and Catch, `task`,
//! `start` (`states:startExecution`) and `branches` (Map and Parallel) the states that
//! do work, `failures` the failures they share.

mod branches;
mod failures;
mod io;
mod retry;
mod run;
mod start;
mod states;
mod task;

pub(crate) use run::run_execution;
