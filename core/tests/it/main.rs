//! The one integration-test binary of cdkd-core: pure tests, run in parallel.

mod destroy_convergence;
mod destroy_sim;
mod destroy_statements;
mod destroy_support;
mod export_execute;
mod model_contention;
mod model_json;
mod model_keys;
mod model_lock;
mod model_retention;
mod model_state;
mod repair_force;
mod repair_orphan;
mod repair_redact;
mod repair_redact_prop;
mod repair_ref_value;
mod repair_refresh;
mod repair_ssm;
mod repair_views;
mod views_cli_refusals;
mod views_common;
mod views_corpus;
mod views_list;
mod views_props;
mod views_resources;
mod views_show;
