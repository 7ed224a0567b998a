//! Options every command takes, and logging setup.

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct GlobalOpts {
    /// The state bucket (default: env CDKD_STATE_BUCKET, else cdkd-state-<account id>).
    #[arg(long, global = true, env = "CDKD_STATE_BUCKET")]
    pub state_bucket: Option<String>,
    /// The key prefix of cdkd state in the bucket.
    #[arg(long, global = true, default_value = "cdkd")]
    pub state_prefix: String,
    /// The AWS region of the CLI (default: AWS_REGION, else us-east-1).
    #[arg(long, global = true)]
    pub region: Option<String>,
    /// The AWS profile to use.
    #[arg(long, global = true)]
    pub profile: Option<String>,
    /// An SNS topic (ARN) a local run (`--local`) publishes its messages to: waiting for
    /// approval, succeeded, failed, a cleanup's digest (docs/notifications.md).
    #[arg(
        long,
        global = true,
        env = "CDKD_FLOW_NOTIFY_TOPIC",
        value_name = "ARN"
    )]
    pub notify_topic: Option<String>,
    /// An EventBridge bus (name or ARN) a local run puts the same messages on as events
    /// (source `cdkd-flow`).
    #[arg(long, global = true, env = "CDKD_FLOW_NOTIFY_BUS", value_name = "BUS")]
    pub notify_bus: Option<String>,
    /// Debug logging on stderr.
    #[arg(long, short = 'v', global = true)]
    pub verbose: bool,
}

/// Human log lines on stderr; stdout is reserved for output.
pub fn init_logging(verbose: bool) {
    let level = if verbose { "debug" } else { "warn" };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .without_time()
        .with_target(false)
        .try_init();
}

/// Every stack name given on the command line, checked before any AWS call: one that no
/// cdkd stack can have (empty, a control or invisible character) is a usage error, exit
/// 2 (`cdkd_core::keys::check_stack_name`, docs/cli.md).
pub fn check_stacks<'a>(
    names: impl IntoIterator<Item = &'a String>,
) -> Result<(), crate::error::CliError> {
    for n in names {
        cdkd_core::keys::check_stack_name(n)
            .map_err(|e| crate::error::CliError::Usage(e.to_string()))?;
    }
    Ok(())
}
