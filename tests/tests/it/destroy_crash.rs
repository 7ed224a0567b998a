//! Crash safety of the destroy workflow's steps: a fault-injecting deleter
//! kills the wave invocation at random points — before a delete, or after AWS deleted
//! the resource but before the step recorded it — by dropping the step's future, as a
//! Lambda timeout or crash does. The same step is then invoked again with the same input
//! (Step Functions' Retry). After every step, killed or not, state.json must list every
//! resource that still exists; at the end nothing is left behind and nothing was deleted
//! twice. 100 seeds, against the emulator's S3 (state, lock, run artifacts) with an
//! in-memory cloud behind the deleter.
//!
//! Run: `scripts/with-emulator.sh cargo test -p cdkd-tests --test e2e -- destroy_crash`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cdkd_deleters::{DeleteError, DeleteProgress, DeleteRequest, Deleter, Handle, Registry};
use cdkd_functions::destroy::{Carry, DestroyInput};
use cdkd_functions::{steps, Deps, StepError};
use cdkd_tests as h;
use serde_json::{json, Map, Value};
use tokio::sync::Notify;

/// The in-memory cloud: live physical ids and how often each was really deleted.
#[derive(Default)]
struct Cloud {
    live: BTreeSet<String>,
    deletions: BTreeMap<String, u32>,
    rng: u64,
    /// Chance in 1/1000 of a kill at each fault point.
    kill_per_mille: u64,
}

impl Cloud {
    fn roll(&mut self) -> bool {
        // xorshift64*: deterministic per seed.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        (self.rng.wrapping_mul(0x2545F4914F6CDD1D) >> 33) % 1000 < self.kill_per_mille
    }
}

struct FaultDeleter {
    cloud: Arc<Mutex<Cloud>>,
    kill: Arc<Notify>,
}

impl FaultDeleter {
    async fn die(&self) -> ! {
        self.kill.notify_one();
        std::future::pending::<()>().await;
        unreachable!()
    }

    /// Deletes for real; `true` when the resource existed.
    fn delete(&self, id: &str) -> bool {
        let mut c = self.cloud.lock().unwrap();
        if c.live.remove(id) {
            *c.deletions.entry(id.to_string()).or_default() += 1;
            true
        } else {
            false
        }
    }
}

#[async_trait]
impl Deleter for FaultDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let (kill_before, kill_after, async_delete) = {
            let mut c = self.cloud.lock().unwrap();
            (c.roll(), c.roll(), req.logical_id.ends_with('3'))
        };
        if kill_before {
            self.die().await;
        }
        if async_delete {
            // A delete that completes later: the next poll finds it gone.
            return Ok(DeleteProgress::InFlight {
                handle: Handle::AwaitGone {
                    started_ms: 0,
                    deadline_ms: u64::MAX,
                    polls: 0,
                },
                expected_done_ms: 0,
            });
        }
        let existed = self.delete(&req.physical_id);
        if kill_after {
            self.die().await;
        }
        Ok(if existed {
            DeleteProgress::Done
        } else {
            DeleteProgress::AlreadyGone
        })
    }

    async fn poll(
        &self,
        req: &DeleteRequest,
        _handle: &Handle,
    ) -> Result<DeleteProgress, DeleteError> {
        let kill_after = self.cloud.lock().unwrap().roll();
        let existed = self.delete(&req.physical_id);
        if kill_after {
            self.die().await;
        }
        Ok(if existed {
            DeleteProgress::Done
        } else {
            DeleteProgress::AlreadyGone
        })
    }
}

/// A random stack: `n` records, each depending on some earlier ones.
fn random_record(stack: &str, seed: u64, n: usize) -> (Map<String, Value>, Vec<String>) {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407)
        | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let types = [
        "AWS::SNS::Topic",
        "AWS::SQS::Queue",
        "AWS::Logs::LogGroup",
        "AWS::Kinesis::Stream",
        "AWS::ECS::Cluster",
    ];
    let mut resources = Map::new();
    let mut ids = Vec::new();
    for i in 0..n {
        let id = format!("R{i}");
        let mut deps = Vec::new();
        for j in 0..i {
            if next() % 5 == 0 {
                deps.push(json!(format!("R{j}")));
            }
        }
        let phys = format!("{stack}-phys-{i}");
        ids.push(phys.clone());
        resources.insert(
            id,
            json!({"physicalId": phys, "resourceType": types[(next() % types.len() as u64) as usize],
                   "properties": {}, "dependencies": deps, "provisionedBy": "cc-api"}),
        );
    }
    let body = json!({"version": 10, "stackName": stack, "region": "us-east-1", "resources": resources, "outputs": {}});
    (body.as_object().cloned().unwrap(), ids)
}

enum Ran {
    Done(Result<Value, StepError>),
    Killed,
}

async fn invoke(deps: &Deps, kill: &Notify, step: &str, payload: Value) -> Ran {
    tokio::select! {
        r = steps::invoke(step, payload, deps) => Ran::Done(r),
        _ = kill.notified() => Ran::Killed,
    }
}

async fn state_ids(store: &cdkd_aws::StateStore, stack: &str) -> Option<BTreeSet<String>> {
    let loaded = store.get_state(stack, "us-east-1").await.unwrap()?;
    let res = loaded
        .record
        .body
        .get("resources")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    Some(
        res.values()
            .filter_map(|e| {
                e.get("physicalId")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .collect(),
    )
}

async fn one_seed(seed: u64, s3: &aws_sdk_s3::Client, bucket: &str) -> (u32, u32) {
    let stack = format!("Crash{seed}");
    let n = 8 + (seed % 13) as usize;
    let (record, phys) = random_record(&stack, seed, n);
    h::put_raw(
        s3,
        bucket,
        &format!("cdkd/{stack}/us-east-1/state.json"),
        serde_json::to_vec(&record).unwrap(),
    )
    .await;
    let cloud = Arc::new(Mutex::new(Cloud {
        live: phys.iter().cloned().collect(),
        rng: seed.wrapping_mul(0x9E3779B97F4A7C15) | 1,
        kill_per_mille: 150,
        ..Cloud::default()
    }));
    let kill = Arc::new(Notify::new());
    let deleter: Arc<dyn Deleter> = Arc::new(FaultDeleter {
        cloud: cloud.clone(),
        kill: kill.clone(),
    });
    let registry = Registry::empty()
        .with_cloud_control(deleter.clone())
        .with_custom_resources(deleter);
    let mut deps = Deps::from_sdk(h::sdk().await, None).await;
    deps.registry_for = Arc::new(move |_, _| registry.clone());
    deps.budgets.inline_wait = std::time::Duration::from_millis(0);
    let store = deps.store(bucket, "cdkd").await;

    let run_id = format!("run-{seed}");
    let input = DestroyInput {
        stack: stack.clone(),
        stack_region: Some("us-east-1".into()),
        state_bucket: bucket.to_string(),
        state_prefix: "cdkd".into(),
        allow_nested_child: false,
        skip_final_snapshot: false,
        remove_protection: false,
    };
    let Ran::Done(plan) = invoke(
        &deps,
        &kill,
        "destroy-plan",
        json!({"input": input, "runId": run_id}),
    )
    .await
    else {
        panic!("the plan deletes nothing and cannot be killed by the deleter")
    };
    let mut carry: Carry = serde_json::from_value(plan.expect("plan")).unwrap();
    let (mut kills, mut waves) = (0u32, 0u32);
    loop {
        waves += 1;
        assert!(waves < 500, "seed {seed}: the destroy does not converge");
        let payload = json!({"run": carry.run, "locks": carry.locks});
        match invoke(&deps, &kill, "destroy-wave", payload).await {
            Ran::Killed => kills += 1,
            Ran::Done(r) => {
                carry = serde_json::from_value(
                    r.unwrap_or_else(|e| panic!("seed {seed}: wave failed: {e}")),
                )
                .unwrap()
            }
        }
        // The invariant, after every invocation, killed or not.
        let live = cloud.lock().unwrap().live.clone();
        match state_ids(&store, &stack).await {
            Some(ids) => assert!(
                live.is_subset(&ids),
                "seed {seed}: state.json lost a live resource: live {live:?}, state {ids:?}"
            ),
            None => assert!(
                live.is_empty(),
                "seed {seed}: state.json deleted while {live:?} exist"
            ),
        }
        if carry.settled {
            break;
        }
    }
    let Ran::Done(fin) = invoke(
        &deps,
        &kill,
        "destroy-finish",
        json!({"run": carry.run, "locks": carry.locks}),
    )
    .await
    else {
        panic!("finish deletes nothing")
    };
    let fin = fin.expect("finish");
    assert_eq!(fin["complete"], json!(true), "seed {seed}: {fin}");
    let (live, deletions) = {
        let c = cloud.lock().unwrap();
        (c.live.clone(), c.deletions.clone())
    };
    let c = Cloud {
        live,
        deletions,
        ..Cloud::default()
    };
    assert!(c.live.is_empty(), "seed {seed}: left behind {:?}", c.live);
    assert!(
        c.deletions.values().all(|&n| n == 1),
        "seed {seed}: deleted twice: {:?}",
        c.deletions
    );
    assert_eq!(c.deletions.len(), phys.len());
    assert!(
        state_ids(&store, &stack).await.is_none(),
        "seed {seed}: state.json left"
    );
    assert!(
        h::get_text(s3, bucket, &format!("cdkd/{stack}/us-east-1/lock.json"))
            .await
            .is_none(),
        "seed {seed}: lock left"
    );
    (kills, waves)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destroy_survives_kills_at_random_points_over_100_seeds() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let (mut kills, mut waves) = (0, 0);
    for seed in 1..=100u64 {
        let (k, w) = one_seed(seed, &s3, &bucket).await;
        kills += k;
        waves += w;
    }
    println!("100 seeds: {kills} kills, {waves} wave invocations");
    assert!(
        kills >= 100,
        "the faults must actually fire ({kills} kills)"
    );
}
