//! `cdkd-flow state list | show | resources` (docs/state-views.md, "What every state command shares" and "state resources <stack>").
//!
//! This file only gathers data (the listing, the records and locks, read with bounded
//! concurrency) and prints what the pure renderers in `cdkd_core::view::state` return:
//! stdout for the view, stderr for the warnings.

use std::process::ExitCode;

use cdkd_aws::LockContent;
use cdkd_aws::{LoadedState, StateStore, StoreError};
use cdkd_core::keys::StackRef;
use cdkd_core::state::{resolve_single, LegacyOnly};
use cdkd_core::state_refusal::StateRefusal;
use cdkd_core::view::state::list::{
    list_json_with_locks, list_long_json, list_long_text, list_plain_with_locks, LockRead,
    LongInput, RecordRead, RefView,
};
use cdkd_core::view::state::resources::{render_resources, ResourcesMode};
use cdkd_core::view::state::show::{
    lock_without_record_json, lock_without_record_text, nested_child_ids, show_json,
    show_nested_json, show_nested_text, show_text, LockView, LoneLock, ShowNode,
};
use cdkd_core::view::state::tree::{build_tree, tree_json, tree_text, TreeEntry};
use cdkd_core::view::Rendered;
use clap::{Args, Subcommand};
use futures::stream::{self, StreamExt};

use crate::context::{self, Ctx};
use crate::error::CliError;
use crate::global::GlobalOpts;
use crate::records::{load_record, no_record, ref_view, resolve};

/// How many S3 reads `state list --long` / `--tree` and the nested walk keep in flight.
const READ_CONCURRENCY: usize = 32;

#[derive(Debug, Subcommand)]
pub enum StateCommand {
    /// List every state record under the prefix (legacy and nested included).
    #[command(alias = "ls")]
    List(ListArgs),
    /// Show one stack's full record: metadata, lock, outputs, resources.
    Show(ShowArgs),
    /// List the resources recorded in one stack's record.
    Resources(ResourcesArgs),
    /// Forget stacks (record and lock; AWS untouched), or with --resource some of one
    /// stack's resources, rewriting the references to them.
    Orphan(super::orphan::Args),
    /// Re-read every resource from AWS and store the reading, redacted, as its
    /// observedProperties (the drift baseline).
    RefreshObserved(super::refresh::Args),
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Show resource count, last-modified time and lock status.
    #[arg(short = 'l', long)]
    pub long: bool,
    /// Output as JSON.
    #[arg(long)]
    pub json: bool,
    /// Render the parent -> child stack tree (reads each record's parent link).
    #[arg(long, conflicts_with = "long")]
    pub tree: bool,
}

fn non_empty(s: &str) -> Result<String, String> {
    if s.is_empty() {
        Err("the value must not be empty".to_string())
    } else {
        Ok(s.to_string())
    }
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Stack name (the state record's stack segment).
    pub stack: String,
    /// Which region's record, when the stack has state in several.
    #[arg(long, value_parser = non_empty)]
    pub stack_region: Option<String>,
    /// Also show every nested-stack child record, depth first.
    #[arg(long)]
    pub show_nested: bool,
    /// Output the record and lock as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ResourcesArgs {
    /// Stack name (the state record's stack segment).
    pub stack: String,
    /// Which region's record, when the stack has state in several.
    #[arg(long, value_parser = non_empty)]
    pub stack_region: Option<String>,
    /// Include dependencies and attributes per resource.
    #[arg(short = 'l', long)]
    pub long: bool,
    /// Output as JSON (wins over --long).
    #[arg(long)]
    pub json: bool,
}

/// docs/state-views.md, "What every state command shares": `--region` on a state subcommand is deprecated but still honoured.
pub const REGION_DEPRECATION: &str = "warning: --region is deprecated on state commands (it only sets the CLI region used to find the state bucket); use --stack-region to select a stack's record, or AWS_REGION";

pub async fn run(g: &GlobalOpts, c: StateCommand) -> Result<ExitCode, CliError> {
    if g.region.is_some() {
        eprintln!("{REGION_DEPRECATION}");
    }
    // Before any AWS call: a stack name no cdkd stack can have is a usage error.
    let named: Vec<&String> = match &c {
        StateCommand::List(_) => Vec::new(),
        StateCommand::Show(a) => vec![&a.stack],
        StateCommand::Resources(a) => vec![&a.stack],
        StateCommand::Orphan(a) => a.stacks.iter().collect(),
        StateCommand::RefreshObserved(a) => a.stacks.iter().collect(),
    };
    crate::global::check_stacks(named)?;
    let ctx = context::build(g).await?;
    let result = match c {
        StateCommand::List(a) => list(&ctx, &a).await,
        StateCommand::Show(a) => show(&ctx, &a).await,
        StateCommand::Resources(a) => resources(&ctx, &a).await,
        StateCommand::Orphan(a) => return finish(super::orphan::run(&ctx, &a).await),
        StateCommand::RefreshObserved(a) => return finish(super::refresh::run(&ctx, &a).await),
    };
    finish(result.map(|rendered| {
        emit(&rendered);
        ExitCode::SUCCESS
    }))
}

/// The exit status of a state command; a refusal that spans lines is printed line by line.
fn finish(result: Result<ExitCode, CliError>) -> Result<ExitCode, CliError> {
    match result {
        Ok(code) => Ok(code),
        // A refusal built by the renderers may span lines on purpose (the legacy
        // refusal's `Migrate with:` line, an orphan's unresolved references); every line
        // of it is already sanitised.
        Err(CliError::Refused(msg)) if msg.contains('\n') => {
            let mut lines = msg.lines();
            eprintln!("error: {}", lines.next().unwrap_or_default());
            for l in lines {
                eprintln!("{l}");
            }
            Ok(ExitCode::from(1))
        }
        Err(e) => Err(e),
    }
}

/// Warnings to stderr (logger), then the view to stdout. A closed stdout is not an error.
fn emit(r: &Rendered) {
    for w in &r.warnings {
        tracing::warn!("{w}");
    }
    crate::out::print(&r.stdout);
}

// ---------------------------------------------------------------------------------
// state list

async fn list(ctx: &Ctx, a: &ListArgs) -> Result<Rendered, CliError> {
    let (refs, lone) = ctx.store.list_refs_and_lone_locks().await?;
    let views: Vec<RefView<'_>> = refs.iter().map(ref_view).collect();
    if a.tree {
        let entries = tree_entries(&ctx.store, &refs).await;
        let roots = build_tree(entries);
        return Ok(if a.json {
            tree_json(&roots)
        } else {
            tree_text(&roots)
        });
    }
    if !a.long {
        let lone: Vec<RefView<'_>> = lone.iter().map(ref_view).collect();
        return Ok(if a.json {
            list_json_with_locks(&views, &lone)
        } else {
            list_plain_with_locks(&views, &lone)
        });
    }
    let reads = long_reads(&ctx.store, &refs).await;
    let lone_reads = lone_lock_reads(&ctx.store, &lone).await;
    let mut inputs: Vec<LongInput<'_>> = refs
        .iter()
        .zip(reads.iter())
        .map(|(r, (record, lock))| LongInput {
            r: ref_view(r),
            record: match record {
                RecordOutcome::NotFound => RecordRead::NotFound,
                RecordOutcome::Failed => RecordRead::Failed,
                RecordOutcome::Found(s) => RecordRead::Found(&s.record.body),
            },
            lock: *lock,
        })
        .collect();
    // A lock released since the listing is no longer a row.
    inputs.extend(
        lone.iter()
            .zip(lone_reads)
            .filter(|(_, lock)| *lock != LockRead::Unlocked)
            .map(|(r, lock)| LongInput {
                r: ref_view(r),
                record: RecordRead::LockWithoutRecord,
                lock,
            }),
    );
    Ok(if a.json {
        list_long_json(&inputs)
    } else {
        list_long_text(&inputs)
    })
}

enum RecordOutcome {
    NotFound,
    Failed,
    Found(Box<LoadedState>),
}

/// `--long`: per ref, the record (region-scoped refs only) and the lock, each guarded on
/// its own, with up to [`READ_CONCURRENCY`] refs in flight. Results in `refs` order.
async fn long_reads(store: &StateStore, refs: &[StackRef]) -> Vec<(RecordOutcome, LockRead)> {
    stream::iter(refs.iter())
        .map(|r| async move {
            let record = async {
                match r.region.as_deref() {
                    None => RecordOutcome::NotFound,
                    Some(region) => match store.get_state(&r.stack, region).await {
                        Ok(Some(s)) => RecordOutcome::Found(Box::new(s)),
                        Ok(None) => RecordOutcome::NotFound,
                        Err(e) => {
                            tracing::debug!("state read failed: {e}");
                            RecordOutcome::Failed
                        }
                    },
                }
            };
            let lock = async {
                match store.get_lock(&r.stack, r.region.as_deref()).await {
                    Ok(Some(_)) => LockRead::Locked,
                    Ok(None) => LockRead::Unlocked,
                    Err(e) => {
                        tracing::debug!("lock read failed: {e}");
                        LockRead::Failed
                    }
                }
            };
            futures::join!(record, lock)
        })
        .buffered(READ_CONCURRENCY)
        .collect()
        .await
}

/// `--long`: the lock of every lock without a record (docs/state-views.md, "A lock left without a record"); an
/// object whose body is not a lock still counts as locked.
async fn lone_lock_reads(store: &StateStore, lone: &[StackRef]) -> Vec<LockRead> {
    stream::iter(lone.iter())
        .map(|r| async move {
            let key = cdkd_core::keys::lock_key(&store.prefix, &r.stack, r.region.as_deref());
            match store.get_raw(&key).await {
                Ok(Some(_)) => LockRead::Locked,
                Ok(None) => LockRead::Unlocked,
                Err(e) => {
                    tracing::debug!("lock read failed: {e}");
                    LockRead::Failed
                }
            }
        })
        .buffered(READ_CONCURRENCY)
        .collect()
        .await
}

/// `--tree`: the parent link of every region-scoped record; a legacy, unreadable or
/// vanished record is a root with no link.
async fn tree_entries(store: &StateStore, refs: &[StackRef]) -> Vec<TreeEntry> {
    stream::iter(refs.iter())
        .map(|r| async move {
            let Some(region) = r.region.as_deref() else {
                return TreeEntry::unlinked(&r.stack, None);
            };
            match store.get_state(&r.stack, region).await {
                Ok(Some(s)) => TreeEntry::from_record(&r.stack, Some(region), &s.record.body),
                Ok(None) => TreeEntry::unlinked(&r.stack, Some(region)),
                Err(e) => {
                    tracing::debug!("state read failed: {e}");
                    TreeEntry::unlinked(&r.stack, Some(region))
                }
            }
        })
        .buffered(READ_CONCURRENCY)
        .collect()
        .await
}

// ---------------------------------------------------------------------------------
// state show / state resources: single-record resolution (docs/state-views.md, "What every state command shares")

async fn read_lock(
    store: &StateStore,
    stack: &str,
    region: &str,
) -> Result<Option<LockView>, StoreError> {
    Ok(store
        .get_lock(stack, Some(region))
        .await?
        .map(|(info, _etag)| LockView::from_info(&info)))
}

// ---------------------------------------------------------------------------------
// state show

async fn show(ctx: &Ctx, a: &ShowArgs) -> Result<Rendered, CliError> {
    let (refs, lone) = ctx.store.list_refs_and_lone_locks().await?;
    let views: Vec<RefView<'_>> = refs.iter().map(ref_view).collect();
    let region = match resolve_single(&a.stack, &views, a.stack_region.as_deref()) {
        Ok(RefView {
            region: Some(region),
            ..
        }) => region.to_string(),
        Ok(_) => {
            return Err(CliError::refused(&LegacyOnly {
                stack: a.stack.clone(),
            }))
        }
        Err(refusal) => {
            // No record: a lock left without one is shown as such (docs/state-views.md, "A lock without a record").
            let lone: Vec<RefView<'_>> = lone
                .iter()
                .map(ref_view)
                .filter(|r| r.stack == a.stack)
                .collect();
            if lone.is_empty() {
                return Err(CliError::refused(&refusal));
            }
            // Locks in several regions and no --stack-region: the ambiguity refusal.
            let one = resolve_single(&a.stack, &lone, a.stack_region.as_deref()).map_err(
                |lone_refusal| {
                    CliError::refused(if a.stack_region.is_none() {
                        &lone_refusal
                    } else {
                        &refusal
                    })
                },
            )?;
            return match lock_without_record(ctx, &a.stack, one.region, a.json).await? {
                Some(rendered) => Ok(rendered),
                None => Err(no_record(ctx, &a.stack, one.region.unwrap_or_default())),
            };
        }
    };
    let (state, lock) = futures::join!(
        ctx.store.get_state(&a.stack, &region),
        read_lock(&ctx.store, &a.stack, &region)
    );
    let state = match state? {
        Some(s) => s,
        // Deleted since the listing: its lock may still be there.
        None => {
            return match lock_without_record(ctx, &a.stack, Some(&region), a.json).await? {
                Some(rendered) => Ok(rendered),
                None => Err(no_record(ctx, &a.stack, &region)),
            }
        }
    };
    let lock = lock?;
    let mut root = ShowNode {
        stack: a.stack.clone(),
        region: region.clone(),
        record: state.record.body,
        lock,
        children: Vec::new(),
    };
    if !a.show_nested {
        return Ok(if a.json {
            show_json(&root)
        } else {
            show_text(&root, ctx.store.s3_now_ms())
        });
    }
    walk_children(ctx, &mut root).await?;
    Ok(if a.json {
        show_nested_json(&root)
    } else {
        show_nested_text(&root, ctx.store.s3_now_ms())
    })
}

/// docs/state-views.md, "A lock without a record": the view of a stack's lock left without a record, or `None`
/// when there is no lock object either.
async fn lock_without_record(
    ctx: &Ctx,
    stack: &str,
    region: Option<&str>,
    json: bool,
) -> Result<Option<Rendered>, CliError> {
    let read = ctx
        .locks
        .read_object(stack, region)
        .await
        .map_err(|e| CliError::Aws(e.to_string()))?;
    let Some(read) = read else {
        return Ok(None);
    };
    let view;
    let lone = match &read.content {
        LockContent::Lock(info) => {
            view = LockView::from_info(info);
            LoneLock::Held(&view)
        }
        LockContent::Malformed(why) => LoneLock::Malformed(why),
    };
    Ok(Some(if json {
        lock_without_record_json(lone)
    } else {
        lock_without_record_text(&ctx.contention(stack, region), lone, ctx.store.s3_now_ms())
    }))
}

/// docs/state-views.md, "--show-nested": loads every nested child `<parent>~<logicalId>` in the parent's
/// region, depth first in the parent's key order; a record whose `resources` is not a map has
/// no children. A missing child refuses the command by name; a child's lock read
/// failure reads as no lock.
async fn walk_children(ctx: &Ctx, root: &mut ShowNode) -> Result<(), CliError> {
    let mut pending: Vec<&mut ShowNode> = vec![root];
    while let Some(node) = pending.pop() {
        let ids = nested_child_ids(&node.record);
        let parent = node.stack.clone();
        let region = node.region.clone();
        let loaded: Vec<Result<ShowNode, CliError>> = stream::iter(ids)
            .map(|id| {
                let (parent, region) = (parent.clone(), region.clone());
                async move {
                    let child = cdkd_core::keys::child_stack_name(&parent, &id);
                    let (state, lock) = futures::join!(
                        ctx.store.get_state(&child, &region),
                        read_lock(&ctx.store, &child, &region)
                    );
                    let record = match state {
                        Ok(Some(s)) => s.record.body,
                        Ok(None) => {
                            return Err(CliError::refused(&StateRefusal::MissingNestedChild {
                                parent,
                                logical_id: id,
                                child,
                                region,
                            }))
                        }
                        Err(e) => return Err(e.into()),
                    };
                    Ok(ShowNode {
                        stack: child,
                        region,
                        record,
                        lock: lock.unwrap_or(None),
                        children: Vec::new(),
                    })
                }
            })
            .buffered(READ_CONCURRENCY)
            .collect()
            .await;
        for child in loaded {
            node.children.push(child?);
        }
        pending.extend(node.children.iter_mut());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------
// state resources

async fn resources(ctx: &Ctx, a: &ResourcesArgs) -> Result<Rendered, CliError> {
    let region = resolve(ctx, &a.stack, a.stack_region.as_deref()).await?;
    let state = load_record(ctx, &a.stack, &region).await?;
    let mode = if a.json {
        ResourcesMode::Json
    } else if a.long {
        ResourcesMode::Long
    } else {
        ResourcesMode::Plain
    };
    Ok(render_resources(
        &a.stack,
        &region,
        &state.record.body,
        mode,
    ))
}
