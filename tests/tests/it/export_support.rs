//! What the export's step tests share (export_steps, export_cleanup_faults,
//! export_phase_faults): a run of the steps against the emulator (its bucket, run id and
//! dependencies), Route's loop, the set-up of a two-level tree (a root with a queue and
//! nested children with a topic each) planned and locked, and the reads of CloudFormation.

use std::ops::Deref;

use aws_sdk_cloudformation::types::Stack;
use cdkd_core::export::execute::Next;
use cdkd_core::keys::state_key;
use cdkd_functions::export::carry::Carry;
use cdkd_functions::{steps, Deps, StepError};
use cdkd_tests as h;
use serde_json::{json, Value};

pub const REGION: &str = "us-east-1";
pub const PREFIX: &str = "cdkd";

pub fn uniq(tag: &str) -> String {
    format!("{tag}{}", &uuid::Uuid::new_v4().simple().to_string()[..10])
}

pub use cdkd_tests::cfn::{client as cfn, described, outputs, stack_resources as resources};

/// A real SQS queue named `name`; its URL.
pub async fn queue(name: &str) -> String {
    h::fixtures::queue(&h::sdk().await, name).await
}

/// A real SNS topic named `name`; its ARN.
pub async fn topic(name: &str) -> String {
    h::fixtures::topic(&h::sdk().await, name).await
}

/// The step Route's loop runs next; `None` when the cleanup is next.
pub fn route(next: Next) -> Option<&'static str> {
    Some(match next {
        Next::Wait => "export-poll",
        Next::Execute => "export-execute",
        Next::Phase2 => "export-phase2",
        Next::Import => "export-import",
        Next::Flip => "export-flip",
        Next::Adopt => "export-adopt",
        Next::Cleanup => return None,
    })
}

/// A run of the export's steps: a fresh state bucket, the run's id and the steps'
/// dependencies.
pub struct Steps {
    pub s3: aws_sdk_s3::Client,
    pub bucket: String,
    pub run_id: String,
    pub deps: Deps,
}

impl Steps {
    pub async fn new() -> Steps {
        let s3 = h::s3().await;
        let bucket = h::fresh_bucket(&s3).await;
        Steps {
            s3,
            bucket,
            run_id: uniq("run-"),
            deps: Deps::from_sdk(h::sdk().await, None).await,
        }
    }

    pub async fn step(&self, name: &str, payload: Value) -> Result<Value, StepError> {
        steps::invoke(name, payload, &self.deps).await
    }

    pub async fn keys(&self) -> Vec<String> {
        h::list_all_keys(&self.s3, &self.bucket).await
    }

    pub async fn put(&self, key: &str, body: String) {
        h::put_raw(&self.s3, &self.bucket, key, body).await;
    }

    pub async fn text(&self, key: &str) -> Option<String> {
        h::get_text(&self.s3, &self.bucket, key).await
    }

    pub async fn json(&self, key: &str) -> Option<Value> {
        self.text(key)
            .await
            .map(|t| serde_json::from_str(&t).unwrap())
    }

    /// The key of this run's upload of `stack`'s template.
    pub fn template_key(&self, stack: &str) -> String {
        format!("{PREFIX}/_runs/{}/templates/{stack}.json", self.run_id)
    }

    /// Writes `stack`'s record and this run's upload of its template, as the CLI does;
    /// the template's key.
    pub async fn seed(&self, stack: &str, record: &Value, template: &Value) -> String {
        self.put(&state_key(PREFIX, stack, REGION), record.to_string())
            .await;
        let key = self.template_key(stack);
        self.put(&key, template.to_string()).await;
        key
    }

    /// `export-plan` then `export-lock` on `input`: what `export-lock` was given (to run
    /// it again) and the carried state it returned.
    pub async fn plan_and_lock(&self, input: Value) -> (Value, Carry) {
        let plan = self
            .step("export-plan", json!({"input": input, "runId": self.run_id}))
            .await
            .expect("plan");
        let lock_payload = json!({"input": input, "runId": self.run_id, "plan": plan});
        let carry = self
            .step("export-lock", lock_payload.clone())
            .await
            .expect("lock");
        (lock_payload, serde_json::from_value(carry).unwrap())
    }

    /// Runs Route's loop (poll, execute, phase 2) until `stop` or cleanup is next.
    pub async fn drive(&self, carry: Carry, stop: Next) -> Result<Carry, StepError> {
        self.drive_watching(carry, stop, &mut |_| {}).await
    }

    /// Runs `export-cleanup` on a run that reached it; its output, whose report must say
    /// the tree migrated.
    pub async fn clean_up(&self, carry: &Carry) -> Value {
        let done = self
            .step("export-cleanup", serde_json::to_value(carry).unwrap())
            .await
            .expect("cleanup");
        assert_eq!(done["report"]["outcome"], "migrated", "{done}");
        done
    }

    /// As `drive`, showing `seen` the carried state after every step.
    pub async fn drive_watching(
        &self,
        mut carry: Carry,
        stop: Next,
        seen: &mut dyn FnMut(&Carry),
    ) -> Result<Carry, StepError> {
        for _ in 0..200 {
            if carry.next == stop {
                return Ok(carry);
            }
            let Some(step) = route(carry.next) else {
                return Ok(carry);
            };
            let out = self
                .step(step, serde_json::to_value(&carry).unwrap())
                .await?;
            carry = serde_json::from_value(out).unwrap();
            seen(&carry);
        }
        panic!("the run did not settle");
    }
}

/// A root with a queue (and the Output `QueueUrl`) and nested children `Child`,
/// `Child2`, ... with a topic each (and the Output `TopicArn`), two levels, which is what
/// CloudFormation can import; their records and templates as cdkd keeps them, to change
/// before they are written and locked by `lock`.
pub struct TreeSeed {
    pub steps: Steps,
    pub root: String,
    pub queue_url: String,
    /// (cdkd name, record, template) per stack, the root first.
    pub stacks: Vec<(String, Value, Value)>,
    /// The children's topics, in the order of `stacks[1..]`.
    pub topics: Vec<String>,
}

/// The tree of `children` children under a root named `uniq(tag)`, its queue and topics
/// real in the emulator.
pub async fn tree_seed(tag: &str, children: usize) -> TreeSeed {
    let steps = Steps::new().await;
    let root = uniq(tag);
    let queue_url = queue(&root.to_lowercase()).await;
    let mut root_rec = json!({"version": 10, "stackName": root, "region": REGION, "resources": {
        "Queue": {"resourceType": "AWS::SQS::Queue", "physicalId": queue_url, "properties": {}, "attributes": {}}}});
    let mut root_tpl = json!({"Resources": {"Queue": {"Type": "AWS::SQS::Queue"}},
        "Outputs": {"QueueUrl": {"Value": {"Ref": "Queue"}}}});
    let mut stacks = Vec::new();
    let mut topics = Vec::new();
    for i in 1..=children {
        let logical = if i == 1 {
            "Child".to_string()
        } else {
            format!("Child{i}")
        };
        let name = format!("{root}~{logical}");
        let topic = topic(&format!("{root}-events{i}")).await;
        root_rec["resources"][&logical] = json!({"resourceType": "AWS::CloudFormation::Stack",
            "physicalId": format!("arn:aws:cloudformation:us-east-1:123456789012:stack/{root}-{logical}/1"),
            "properties": {}, "attributes": {}});
        root_tpl["Resources"][&logical] = json!({"Type": "AWS::CloudFormation::Stack",
            "Properties": {"TemplateURL": format!("https://example.invalid/{logical}.json")}});
        let rec = json!({"version": 10, "stackName": name, "region": REGION, "parentStack": root, "parentLogicalId": logical,
            "resources": {"Topic": {"resourceType": "AWS::SNS::Topic", "physicalId": topic, "properties": {}, "attributes": {}}}});
        let tpl = json!({"Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
            "Outputs": {"TopicArn": {"Value": {"Ref": "Topic"}}}});
        stacks.push((name, rec, tpl));
        topics.push(topic);
    }
    stacks.insert(0, (root.clone(), root_rec, root_tpl));
    TreeSeed {
        steps,
        root,
        queue_url,
        stacks,
        topics,
    }
}

impl TreeSeed {
    /// Writes every record and template, then plans and locks the tree with these
    /// `options` (`export-plan`'s input options).
    pub async fn lock(self, options: Value) -> Tree {
        let mut templates = serde_json::Map::new();
        for (name, rec, tpl) in &self.stacks {
            let key = self.steps.seed(name, rec, tpl).await;
            templates.insert(name.clone(), Value::String(key));
        }
        let input = json!({"stack": self.root, "stateBucket": self.steps.bucket, "statePrefix": PREFIX,
            "templates": templates, "options": options, "dryRun": false});
        let (lock_payload, carry) = self.steps.plan_and_lock(input).await;
        let children: Vec<String> = self.stacks[1..].iter().map(|(n, _, _)| n.clone()).collect();
        Tree {
            child: children[0].clone(),
            child_cfn: children[0].replace('~', "-"),
            children,
            topic: self.topics[0].clone(),
            steps: self.steps,
            root: self.root,
            queue_url: self.queue_url,
            lock_payload,
            carry,
        }
    }
}

/// A tree planned and locked: the steps that run it, and the carried state `export-lock`
/// returned.
pub struct Tree {
    pub steps: Steps,
    pub root: String,
    /// The first child, its CloudFormation stack name, its topic.
    pub child: String,
    pub child_cfn: String,
    pub topic: String,
    /// Every child, `child` first.
    pub children: Vec<String>,
    pub queue_url: String,
    /// What `export-lock` was given (to run it again).
    pub lock_payload: Value,
    pub carry: Carry,
}

impl Deref for Tree {
    type Target = Steps;

    fn deref(&self) -> &Steps {
        &self.steps
    }
}

pub fn tag_keys(s: &Stack) -> Vec<String> {
    s.tags()
        .iter()
        .filter_map(|t| t.key().map(str::to_owned))
        .collect()
}
