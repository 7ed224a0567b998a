//! The `export` command's line: its arguments, its `--help`, and what they ask of the
//! templates' source and of the run (`ExportOptions`).

use std::path::PathBuf;

use cdkd_functions::export::{ExportOptions, TemplateFrom};

use crate::export_source::{AppOptions, TemplateSource};
use crate::remote::RemoteArgs;

const HELP: &str = "\
Migrates a cdkd-managed stack into CloudFormation through IMPORT change sets, or with \
--dry-run plans the migration (nested stacks included). The templates come from \
--template (one JSON or YAML file, told apart by its content, not its name; no nested \
template is followed, so a nested stack that has a cdkd record is refused: export such \
a stack from the cloud assembly), --cdk-out (a synthesized cloud assembly: the stack's template and \
every nested template below it) or --app (the CDK app, run with CDK_OUTDIR set, then \
read as --cdk-out). STACK is required with --template; with --cdk-out or --app it may \
be left out when the assembly holds exactly one stack (several are refused, listing \
them). The templates are uploaded as JSON under <prefix>/_runs/<run-id>/templates/ in \
the state bucket, and the export workflow plans from them and from the stack's cdkd \
state.

The plan refuses, naming the stack and the cause: a CloudFormation stack that already \
has a destination name (in any status, REVIEW_IN_PROGRESS included), a missing or \
damaged state record (the root's or a nested child's), and any resource that cannot be \
imported (blocked rows are listed one per logical id). Every AWS call uses the record's \
region.

--dry-run prints, per stack (leaf first), the resources imported in phase 1 with their \
identifiers, the nested stacks adopted, what phase 2 creates or re-creates, the \
resolved parameters (NoEcho ones masked) and the warnings; --json prints the plan \
itself (the run's plan.json). A dry run takes no lock and writes nothing but the run's \
own artifacts.

Without --dry-run the plan is printed and confirmed (unless -y; without a terminal -y is \
required), then the migration runs: the stack's lock is taken, phase 1 imports the \
resources (an IMPORT change set without Outputs), phase 2 applies the full template \
(Outputs, Custom Resources) with an UPDATE change set, and the cdkd record is deleted and \
the lock released. On a failure no record is deleted, the lock is released and the \
report says what CloudFormation holds and what to redo by hand. IMPORT-unsupported \
resources are deleted before phase 2 re-creates them. Nested children are migrated \
first, then the parent adopts them (phase 1B); CloudFormation imports one level of \
nesting only, so a deeper tree is planned (--dry-run) but refused.

With --require-approval the plan is not confirmed here: the run writes \
<prefix>/_runs/<run-id>/approval.json after the plan and waits, before taking any lock, \
until `cdkd-flow runs approve <run>` or `cdkd-flow runs reject <run>` answers (with \
--local: `... --local`, and this process must keep running; it looks for the decision \
every few seconds). A rejection ends the run failed with nothing locked or changed; \
no decision within 7 days ends it the same way. The command prints the two commands \
on stderr and follows the run as without approval.

Without --local the deployed export state machine is started (from \
--state-machine-arn, else env CDKD_FLOW_EXPORT_STATE_MACHINE_ARN, else the backend \
stack's outputs) and watched until it ends; `cdkd-flow runs watch <run>` prints the \
same plan or report later.

Exit status: 0 when the plan has no refusal (dry run), the stack migrated, the plan \
had nothing to migrate or the confirmation was declined (nothing is locked or changed \
then), 1 when the export was refused or the run failed, 2 for a usage error (no STACK \
with --template or with an assembly of several stacks, a missing -y without a \
terminal).";

#[derive(Debug, clap::Args)]
#[command(long_about = HELP)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["template", "cdk_out", "app"])))]
pub struct Args {
    /// The cdkd stack to export (its nested children come along); required with
    /// --template, optional when the cloud assembly holds exactly one stack.
    #[arg(value_name = "STACK")]
    pub stack: Option<String>,
    /// One template file (JSON or YAML, told apart by its content) for STACK, which must
    /// then be given.
    #[arg(long, value_name = "PATH")]
    pub template: Option<PathBuf>,
    /// A synthesized cloud assembly (cdk.out).
    #[arg(long, value_name = "DIR")]
    pub cdk_out: Option<PathBuf>,
    /// The CDK app command (as in cdk.json's "app"); run with CDK_OUTDIR set.
    #[arg(long, value_name = "CMD")]
    pub app: Option<String>,
    /// The CloudFormation name of the root stack (default: the cdkd name).
    #[arg(long, value_name = "NAME")]
    pub cfn_stack_name: Option<String>,
    /// The CloudFormation name of a nested child, `<cdkd name>=<cfn name>` (repeatable;
    /// default: the cdkd name with `~` replaced by `-`).
    #[arg(long, value_name = "CDKD=CFN")]
    pub cfn_child_stack_name: Vec<String>,
    /// The region of the stack's record (needed when it has state in several).
    #[arg(long, value_name = "REGION")]
    pub stack_region: Option<String>,
    /// A root template parameter, `KEY=VALUE` (repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    pub parameter: Vec<String>,
    /// Let phase 2 create Custom Resources (runs their create handler again).
    #[arg(long)]
    pub include_non_importable: bool,
    /// Block the types IMPORT does not support instead of pre-deleting and re-creating them.
    #[arg(long)]
    pub no_recreate_import_unsupported: bool,
    /// Do not refuse on the type registry's import support or the dated block list.
    #[arg(long)]
    pub skip_import_support_preflight: bool,
    /// Refuse instead of warning when another stack reads this stack's outputs.
    #[arg(long)]
    pub strict_cross_stack: bool,
    /// Migrate although the record holds resources the template does not declare: they
    /// are not imported and keep running in AWS, owned by nothing once the record is
    /// deleted (the report says how to bring each back under management).
    #[arg(long)]
    pub leave_unmanaged: bool,
    /// Plan only: print the plan, take no lock, change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the plan as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Run the workflow in this process instead of starting the deployed state machine.
    #[arg(long)]
    pub local: bool,
    /// With --local: do not sleep in Wait states.
    #[arg(long, requires = "local")]
    pub fast: bool,
    /// Do not ask for confirmation.
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Wait after the plan, before the lock, until `cdkd-flow runs approve <run>` (or
    /// `reject`) answers; replaces the confirmation.
    #[arg(long, conflicts_with = "dry_run")]
    pub require_approval: bool,
    /// A CloudFormation service role (ARN) the change sets are submitted with.
    #[arg(long)]
    pub role_arn: Option<String>,
    /// The run id (the execution name); default export-<stack>-<time>.
    #[arg(long)]
    pub run_id: Option<String>,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

impl Args {
    pub(super) fn source(&self) -> TemplateSource {
        if let Some(p) = &self.template {
            TemplateSource::Template(p.clone())
        } else if let Some(d) = &self.cdk_out {
            TemplateSource::CdkOut(d.clone())
        } else {
            let mut o = AppOptions::new(self.app.clone().unwrap_or_default());
            if let Some(r) = self.stack_region.clone() {
                o.region = Some(r);
            }
            TemplateSource::App(o)
        }
    }

    pub(super) fn options(&self) -> ExportOptions {
        ExportOptions {
            include_non_importable: self.include_non_importable,
            no_recreate_import_unsupported: self.no_recreate_import_unsupported,
            skip_import_support_preflight: self.skip_import_support_preflight,
            strict_cross_stack: self.strict_cross_stack,
            cfn_stack_name: self.cfn_stack_name.clone(),
            cfn_child_stack_names: self.cfn_child_stack_name.clone(),
            parameters: self.parameter.clone(),
            template_source: Some(if self.template.is_some() {
                TemplateFrom::File
            } else {
                TemplateFrom::Synth
            }),
            fast: self.fast,
            role_arn: self.role_arn.clone(),
            leave_unmanaged: self.leave_unmanaged,
        }
    }
}
