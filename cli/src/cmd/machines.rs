//! Where the deployed state machines are: the options `runs` and `runs prune` share.

use crate::remote::DEFAULT_BACKEND_STACK;

/// Where the deployed state machines are.
#[derive(Debug, Clone, clap::Args)]
pub struct Machines {
    /// The destroy state machine (default: env CDKD_FLOW_DESTROY_STATE_MACHINE_ARN, else
    /// the backend stack's output).
    #[arg(long, value_name = "ARN")]
    pub destroy_state_machine_arn: Option<String>,
    /// The cleanup state machine (default: env CDKD_FLOW_CLEANUP_STATE_MACHINE_ARN, else
    /// the backend stack's output).
    #[arg(long, value_name = "ARN")]
    pub cleanup_state_machine_arn: Option<String>,
    /// The export state machine (default: env CDKD_FLOW_EXPORT_STATE_MACHINE_ARN, else
    /// the backend stack's output).
    #[arg(long, value_name = "ARN")]
    pub export_state_machine_arn: Option<String>,
    /// The CloudFormation stack of the deployed backend.
    #[arg(long, value_name = "STACK", default_value = DEFAULT_BACKEND_STACK)]
    pub backend_stack: String,
}
