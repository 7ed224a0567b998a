//! What the steps need from outside: AWS clients (or test doubles), the deleters for a
//! region, the clock and the time budgets.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_config::{Region, SdkConfig};
use cdkd_aws::{LockManager, StateStore};
use cdkd_deleters::Registry;

/// Builds the deleter registry for a stack's region; the client is the state bucket's
/// (in the bucket's region), where custom resources' responses are presigned and read.
pub type RegistryFactory = Arc<dyn Fn(&str, aws_sdk_s3::Client) -> Registry + Send + Sync>;
/// Milliseconds since the Unix epoch.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

#[derive(Clone)]
pub struct Deps {
    /// The S3 client of each state bucket, built for the bucket's region
    /// ([`Deps::state_bucket`]).
    pub buckets: BucketClients,
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
    /// (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first").
    pub local: Option<LocalProcess>,
    /// Where the run's messages go (docs/notifications.md); `None`: nowhere.
    pub notify: Option<cdkd_aws::notify::Notifier>,
    /// A run's artifacts that never change once written (its `plan.json`, its uploaded
    /// templates), as this process wrote or read them: a step of a local run, or a warm
    /// Lambda, reads each from S3 once (docs/export.md, "Waiting (export-poll)", "Requests").
    pub artifacts: crate::runs::ArtifactCache,
    /// A local run's `progress.json` as its last step wrote it: the steps of a local run
    /// run in this one process, the only writer of the run's record while it lives (a
    /// live run is never taken over), so the next step reads it from here.
    pub written: crate::runs::ArtifactCache,
}

/// A state bucket's region and the S3 client built for it.
#[derive(Clone, Debug)]
pub struct StateBucket {
    pub region: String,
    pub s3: aws_sdk_s3::Client,
}

impl StateBucket {
    /// A client already built for the bucket's region (the CLI's own), its region read
    /// from its configuration.
    pub fn of_client(s3: aws_sdk_s3::Client) -> StateBucket {
        let region = s3
            .config()
            .region()
            .map(|r| r.as_ref().to_owned())
            .unwrap_or_else(|| cdkd_aws::config::FALLBACK_REGION.to_owned());
        StateBucket { region, s3 }
    }
}

/// The state buckets this process has found the region of, by name (shared by the
/// clones of a [`Deps`]).
#[derive(Clone, Default)]
pub struct BucketClients(Arc<Mutex<HashMap<String, StateBucket>>>);

impl BucketClients {
    pub fn get(&self, bucket: &str) -> Option<StateBucket> {
        self.0.lock().ok().and_then(|m| m.get(bucket).cloned())
    }

    /// Remembers `bucket`'s region and client (the CLI passes the one it built).
    pub fn insert(&self, bucket: &str, known: StateBucket) {
        if let Ok(mut m) = self.0.lock() {
            m.insert(bucket.to_owned(), known);
        }
    }
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
    /// Stop waiting after this long in a step of the 300 s functions (phase 2's
    /// pre-deletes) and go on in its next invocation (docs/export.md, "Phases (export-import, export-execute, export-phase2)",
    /// "Pre-deletes").
    pub step_soft: Duration,
    /// Deletes started at once (a destroy wave's, phase 2's pre-deletes).
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
            step_soft: Duration::from_secs(4 * 60),
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
        let base = sdk.clone();
        let registry_for: RegistryFactory = Arc::new(move |region: &str, state_s3| {
            let cfg = base
                .to_builder()
                .region(Region::new(region.to_string()))
                .build();
            cdkd_deleters::clients::registry_from_config(&cfg, state_s3)
        });
        Deps {
            buckets: BucketClients::default(),
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

    /// The state bucket `bucket`: its region, asked once per process
    /// (`GetBucketLocation`, docs/state-and-lock.md, "Three regions" "Bucket region"), and the S3
    /// client built for it. A failed probe is not remembered: this call falls back to
    /// the SDK's region and the next one asks again.
    pub async fn state_bucket(&self, bucket: &str) -> StateBucket {
        if let Some(known) = self.buckets.get(bucket) {
            return known;
        }
        let owner = self.expected_owner.as_deref();
        match cdkd_aws::bucket::probe_bucket_region(&self.sdk, bucket, owner).await {
            Ok(region) => {
                let known = StateBucket {
                    s3: cdkd_aws::config::s3_client_in_region(&self.sdk, &region),
                    region,
                };
                self.buckets.insert(bucket, known.clone());
                known
            }
            Err(message) => {
                tracing::debug!(
                    "GetBucketLocation of {} failed: {message}",
                    cdkd_core::text::flatten_str(bucket)
                );
                let region = cdkd_aws::bucket::client_region(&self.sdk);
                StateBucket {
                    s3: cdkd_aws::config::s3_client_in_region(&self.sdk, &region),
                    region,
                }
            }
        }
    }

    pub async fn store(&self, bucket: &str, prefix: &str) -> StateStore {
        let s3 = self.state_bucket(bucket).await.s3;
        StateStore::new(s3, bucket, prefix, self.expected_owner.clone())
    }

    pub async fn locks(&self, bucket: &str, prefix: &str) -> LockManager {
        LockManager::new(self.store(bucket, prefix).await, None)
    }

    /// The deleters for resources in `region`, custom resources answering into the state
    /// bucket `bucket` (through its region's client).
    pub async fn registry(&self, region: &str, bucket: &str) -> Registry {
        let state_s3 = self.state_bucket(bucket).await.s3;
        (self.registry_for)(region, state_s3)
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
