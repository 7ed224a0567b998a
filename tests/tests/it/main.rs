//! The one integration-test binary of cdkd-tests: end-to-end tests against the local AWS emulator.

mod bucket_resolution;
mod cleanup_select;
mod deleters_custom;
mod deleters_ec2;
mod deleters_ec2_instance;
mod deleters_events;
mod deleters_policies;
mod deleters_sdk;
mod destroy_crash;
mod destroy_e2e;
mod destroy_load;
mod emulator_registry;
mod engine_differential;
mod export_approval_step;
mod export_cleanup_faults;
mod export_crash;
mod export_phase_faults;
mod export_plan;
mod export_steps;
mod export_support;
mod faults_spec;
mod lock_protocol;
mod orphan_live_attributes;
mod refresh_readers;
mod refresh_stack;
mod store_state;
