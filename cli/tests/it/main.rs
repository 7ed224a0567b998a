//! The one integration-test binary of the cdkd-flow CLI: end-to-end runs of the binary against the emulator.

mod broken_pipe;
mod bucket_region_cli;
mod cleanup_e2e;
mod deployed;
mod destroy_cli;
mod destroy_held_cli;
mod export_approval_cli;
mod export_budget_cli;
mod export_cli;
mod export_plan_cli;
mod export_resume_cli;
mod export_run_cli;
mod export_support;
mod export_tree_cli;
mod follower;
mod local_runs_cli;
mod lock_clock_cli;
mod lock_force_unlock_cli;
mod lock_holder_cli;
mod messages_cli;
mod notify_cli;
mod orphan_cli;
mod pty;
mod refresh_cli;
mod runs_cli;
mod runs_history_cli;
mod sdk_errors;
mod views_cli;

/// The binary under test, built by cargo for this test target.
pub fn cli_binary() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_BIN_EXE_cdkd-flow"))
}

/// `cdkd-flow <args>` as a command with the tests' environment (`cdkd_tests::bin_command`),
/// for a test that spawns it itself.
pub fn cli_command(args: &[&str]) -> std::process::Command {
    cdkd_tests::bin_command(&cli_binary(), args)
}

/// Runs `cdkd-flow <args>` against the emulator with extra environment variables.
pub fn run_cli_env(args: &[&str], env: &[(&str, &str)]) -> cdkd_tests::CliRun {
    cdkd_tests::run_bin_env(&cli_binary(), args, env)
}
