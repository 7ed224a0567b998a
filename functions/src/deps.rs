//! What the steps need from outside: AWS clients (or test doubles), the deleters for a
//! region, the clock and the time budgets.

use std::sync::Arc;
use std::time::Duration;

use aws_config::{Region, SdkConfig};
use cdkd_aws::{LockManager, StateStore};
use cdkd_deleters::Registry;

/// Builds the deleter registry for a stack's region.
pub type RegistryFactory = Arc<dyn Fn(&str) -> Registry + Send + Sync>;
/// Milliseconds since the Unix epoch.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

#[derive(Clone)]
pub struct Deps {
    /// S3 client for the state bucket.
    pub s3: aws_sdk_s3::Client,
    /// The SDK configuration the other clients are built from, per region (the
    /// `export-plan` reads use the record's region).
    pub sdk: SdkConfig,
    /// Sent as `ExpectedBucketOwner` when known.
    pub expected_owner: Option<String>,
    pub registry_for: RegistryFactory,
    pub now_ms: Clock,
    pub budgets: Budgets,
    /// Set when the steps run in a local CLI process (`--local`): the locks they take
    /// name this host and process, so a later command can tell whether the run is alive
    /// (docs/export.md §10.8).
    pub local: Option<LocalProcess>,
    /// Where the run's messages go (docs/notifications.md); `None`: nowhere.
    pub notify: Option<cdkd_aws::notify::Notifier>,
    /// A run's artifacts that never change once written (its `plan.json`, its uploaded
    /// templates), as this process wrote or read them: a step of a local run, or a warm
    /// Lambda, reads each from S3 once (docs/export.md §10.3, "Requests").
    pub artifacts: crate::runs::ArtifactCache,
    /// A local run's `progress.json` as its last step wrote it: the steps of a local run
    /// run in this one process, the only writer of the run's record while it lives (a
    /// live run is never taken over), so the next step reads it from here.
    pub written: crate::runs::ArtifactCache,
}

/// The host and process of a local run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalProcess {
    pub host: String,
    pub pid: u32,
}

/// Time limits of one wave invocation.
#[derive(Debug, Clone, Copy)]
pub struct Budgets {
    /// Stop starting new work after this long (Lambda's limit is 15 minutes).
    pub wave_soft: Duration,
    /// A wave waits inline (instead of returning to a `Wait` state) when the earliest
    /// delete in flight is expected within this long.
    pub inline_wait: Duration,
    /// Deletes started at once.
    pub max_parallel: usize,
    /// Attempts of a delete that fails with a retryable error before it counts as failed.
    pub max_attempts: u32,
    /// The execution history limit the loops plan for (docs/runs.md, "Continuing in a
    /// new execution"): `CDKD_FLOW_HISTORY_LIMIT`, else 25,000.
    pub history_limit: u64,
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets {
            wave_soft: Duration::from_secs(10 * 60),
            inline_wait: Duration::from_secs(5),
            max_parallel: 16,
            max_attempts: 4,
            history_limit: crate::runs::history_limit(),
        }
    }
}

impl Deps {
    /// The real thing: the SDK's default chain (honouring `AWS_ENDPOINT_URL`), every
    /// deleter with clients for the stack's region.
    pub async fn from_sdk(sdk: SdkConfig, expected_owner: Option<String>) -> Deps {
        let s3 = cdkd_aws::config::s3_client(&sdk);
        let state_s3 = s3.clone();
        let base = sdk.clone();
        let registry_for: RegistryFactory = Arc::new(move |region: &str| {
            let cfg = base
                .to_builder()
                .region(Region::new(region.to_string()))
                .build();
            cdkd_deleters::clients::registry_from_config(&cfg, state_s3.clone())
        });
        Deps {
            s3,
            sdk,
            expected_owner,
            registry_for,
            now_ms: Arc::new(cdkd_aws::store::now_ms),
            budgets: Budgets::default(),
            local: None,
            notify: None,
            artifacts: Default::default(),
            written: Default::default(),
        }
    }

    /// Loads the SDK configuration from the environment (Lambda or the CLI), the
    /// notification targets too (`CDKD_FLOW_NOTIFY_TOPIC`, `CDKD_FLOW_NOTIFY_BUS`).
    pub async fn from_env() -> Deps {
        let sdk = cdkd_aws::config::load_sdk_config(None, None).await;
        let owner = cdkd_aws::bucket::account_id(&sdk).await.ok();
        let mut deps = Deps::from_sdk(sdk, owner).await;
        deps.notify = cdkd_aws::notify::Notifier::from_env(&deps.sdk);
        deps
    }

    pub fn store(&self, bucket: &str, prefix: &str) -> StateStore {
        StateStore::new(self.s3.clone(), bucket, prefix, self.expected_owner.clone())
    }

    pub fn locks(&self, bucket: &str, prefix: &str) -> LockManager {
        LockManager::new(self.store(bucket, prefix), None)
    }

    /// The lock owner of run `run_id`: `cdkd-flow:<run-id>`, with this host and process
    /// for a local run.
    pub fn flow_owner(&self, run_id: &str) -> String {
        match &self.local {
            Some(p) => cdkd_core::lock::local_flow_owner(run_id, &p.host, p.pid),
            None => cdkd_core::lock::flow_owner(run_id),
        }
    }

    pub fn now(&self) -> i64 {
        (self.now_ms)()
    }
}

/// The state prefix an input that names none means (`cdkd`): the serde default of every
/// step input's `statePrefix`.
pub fn default_prefix() -> String {
    cdkd_core::keys::DEFAULT_PREFIX.to_string()
}
