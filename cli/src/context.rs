//! Builds what every state command needs from the global options: the SDK
//! configuration, the resolved state bucket, and the state store and lock manager over
//! it (docs/state-and-lock.md, "The state bucket").

use cdkd_aws::bucket::{account_id, resolve_bucket, state_bucket_client};
use cdkd_aws::config::{cli_region, explicit_region, load_sdk_config};
use cdkd_aws::SdkConfig;
use cdkd_aws::{LockManager, StateStore};
use cdkd_core::contention::{ContentionContext, Subject};

use crate::error::CliError;
use crate::global::GlobalOpts;

/// The AWS side of a command.
pub struct Ctx {
    #[allow(dead_code)] // for commands that build other clients (workflows)
    pub sdk: SdkConfig,
    pub store: StateStore,
    pub locks: LockManager,
    pub bucket: String,
    pub prefix: String,
    pub profile: Option<String>,
    /// The CLI region of docs/state-and-lock.md, "Three regions" (`--region`, else `AWS_REGION`, lower-cased,
    /// else `us-east-1`).
    pub cli_region: String,
    /// Where a local run's messages go (`--notify-topic`, `--notify-bus`).
    pub notify: Option<cdkd_aws::notify::Notifier>,
}

impl Ctx {
    /// The dependencies of the steps a local run executes in this process: the SDK
    /// configuration, the bucket owner, the notification targets, and the state
    /// bucket's client this command built for the bucket's region (the steps ask no
    /// second time; docs/state-and-lock.md, "Three regions" "Bucket region").
    pub async fn step_deps(&self) -> cdkd_functions::Deps {
        let mut deps =
            cdkd_functions::Deps::from_sdk(self.sdk.clone(), self.store.expected_owner.clone())
                .await;
        deps.notify = self.notify.clone();
        deps.buckets.insert(
            &self.bucket,
            cdkd_functions::deps::StateBucket::of_client(self.store.client.clone()),
        );
        deps
    }

    /// What the contention refusal and the `force-unlock` commands printed for a stack
    /// name besides the stack (docs/state-and-lock.md, "The contention refusal"): its region (`None`: the legacy
    /// lock key), this run's profile, bucket and prefix.
    pub fn contention<'a>(
        &'a self,
        stack: &'a str,
        region: Option<&'a str>,
    ) -> ContentionContext<'a> {
        ContentionContext {
            subject: Subject::Stack,
            stack,
            region,
            profile: self.profile.as_deref(),
            bucket: Some(&self.bucket),
            prefix: &self.prefix,
        }
    }
}

fn env_nonempty(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Resolves the bucket and builds the clients. Errors are one line.
pub async fn build(g: &GlobalOpts) -> Result<Ctx, CliError> {
    let aws_region = env_nonempty("AWS_REGION");
    let cli_region = cli_region(g.region.as_deref(), aws_region.as_deref());
    let explicit_region = explicit_region(g.region.as_deref(), aws_region.as_deref());
    let profile = g.profile.clone().filter(|p| !p.is_empty());
    let sdk = load_sdk_config(profile.as_deref(), explicit_region.as_deref()).await;

    // The account is needed for ExpectedBucketOwner (best effort) and for the default
    // bucket name (then required: resolve_bucket asks STS again and reports its error).
    let account = match account_id(&sdk).await {
        Ok(a) => Some(a),
        Err(e) => {
            tracing::debug!("{e}");
            None
        }
    };
    // clap already folded CDKD_STATE_BUCKET into --state-bucket.
    let resolved = resolve_bucket(
        &sdk,
        g.state_bucket.as_deref(),
        None,
        account.as_deref(),
        &cli_region,
    )
    .await?;
    let client = state_bucket_client(&sdk, &resolved.name, account.as_deref()).await;
    let store = StateStore::new(
        client,
        resolved.name.clone(),
        g.state_prefix.clone(),
        account,
    );
    let locks = LockManager::new(store.clone(), profile.clone());
    let notify =
        cdkd_aws::notify::Notifier::new(&sdk, g.notify_topic.clone(), g.notify_bus.clone());
    Ok(Ctx {
        notify,
        sdk,
        store,
        locks,
        bucket: resolved.name,
        prefix: g.state_prefix.clone(),
        profile,
        cli_region,
    })
}
