//! `--app CMD`: the CDK app run into a fresh directory, then read as a cloud assembly.

use std::collections::VecDeque;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

use super::assembly::{read_cloud_assembly, read_manifest};
use super::error::SourceError;
use super::types::{AppOptions, TemplateSet};

/// How many of the app's last output lines a failed synth reports.
const APP_TAIL_LINES: usize = 20;

/// The context the CDK CLI (and cdkd) always hands an app, below every other source.
fn default_context() -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("aws:cdk:enable-path-metadata".into(), Value::Bool(true));
    m.insert("aws:cdk:enable-asset-metadata".into(), Value::Bool(true));
    m.insert("aws:cdk:version-reporting".into(), Value::Bool(true));
    m.insert(
        "aws:cdk:bundling-stacks".into(),
        Value::Array(vec![Value::String("**".into())]),
    );
    m
}

/// Context larger than this goes to a file named by `CONTEXT_OVERFLOW_LOCATION_ENV`
/// instead of the `CDK_CONTEXT_JSON` variable (environment size limits).
const CONTEXT_OVERFLOW_LIMIT: usize = 32 * 1024;
/// The cloud-assembly schema and CLI versions announced to the app, as cdkd does.
const CDK_CLI_ASM_VERSION: &str = "38.0.0";
const CDK_CLI_VERSION: &str = "2.1000.0";

/// The context handed to the app: CDK's defaults < `~/.cdk.json` < `cdk.json` <
/// `cdk.context.json` < `-c` values (later layers win, key by key).
fn app_context(opts: &AppOptions) -> Result<Map<String, Value>, SourceError> {
    let mut ctx = default_context();
    let file_layer = |path: &Path, key: Option<&str>| -> Result<Map<String, Value>, SourceError> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
            Err(e) => {
                return Err(SourceError::ReadFile {
                    path: path.to_path_buf(),
                    cause: e.to_string(),
                })
            }
        };
        let v = cdkd_core::json::parse_json(&bytes).map_err(|message| SourceError::FileJson {
            path: path.to_path_buf(),
            message,
        })?;
        let v = match key {
            Some(k) => v.get(k).cloned().unwrap_or(Value::Null),
            None => v,
        };
        Ok(match v {
            Value::Object(m) => m,
            _ => Map::new(),
        })
    };
    let mut layers = Vec::new();
    if let Some(user) = &opts.user_config {
        layers.push(file_layer(user, Some("context"))?);
    }
    layers.push(file_layer(&opts.cwd.join("cdk.json"), Some("context"))?);
    layers.push(file_layer(&opts.cwd.join("cdk.context.json"), None)?);
    layers.push(opts.context.clone());
    for layer in layers {
        for (k, v) in layer {
            ctx.insert(k, v);
        }
    }
    Ok(ctx)
}

/// A fresh, empty directory under the system temp directory.
pub(super) fn fresh_dir(prefix: &str) -> std::io::Result<PathBuf> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let base = std::env::temp_dir();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut last = None;
    for _ in 0..100 {
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("{prefix}-{}-{nanos}-{n}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free directory name")))
}

/// The command line run through `sh -c`: a bare `.js` entry point runs under node.
fn app_command_line(command: &str) -> String {
    let trimmed = command.trim();
    match trimmed.split_whitespace().next() {
        Some(first) if first.ends_with(".js") => format!("node {trimmed}"),
        _ => trimmed.to_string(),
    }
}

/// Reads `stream` line by line, keeping the last [`APP_TAIL_LINES`]; each line is passed
/// to `sink` as it arrives.
async fn collect_lines<R: AsyncRead + Unpin>(
    stream: Option<R>,
    mut sink: impl FnMut(&str),
) -> VecDeque<String> {
    let mut tail = VecDeque::new();
    let Some(stream) = stream else {
        return tail;
    };
    let mut reader = BufReader::new(stream);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let line = String::from_utf8_lossy(&buf);
                let line = line.trim_end_matches(['\n', '\r']);
                sink(line);
                if !line.trim().is_empty() {
                    if tail.len() == APP_TAIL_LINES {
                        tail.pop_front();
                    }
                    tail.push_back(line.to_string());
                }
            }
        }
    }
    tail
}

fn describe_status(status: std::process::ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return format!("killed by signal {sig}");
        }
    }
    status.to_string()
}

/// Runs the app into `outdir`.
async fn run_app(opts: &AppOptions, outdir: &Path) -> Result<(), SourceError> {
    let spawn_error = |cause: String| SourceError::AppSpawn {
        command: opts.command.clone(),
        cause,
    };
    let context = app_context(opts)?;
    let context_json = serde_json::to_string(&Value::Object(context))
        .map_err(|e| spawn_error(format!("cannot serialize the context: {e}")))?;
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(app_command_line(&opts.command))
        .current_dir(&opts.cwd)
        .env("CDK_OUTDIR", outdir)
        .env("CDK_CLI_ASM_VERSION", CDK_CLI_ASM_VERSION)
        .env("CDK_CLI_VERSION", CDK_CLI_VERSION)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(region) = opts.region.as_deref().filter(|r| !r.is_empty()) {
        cmd.env("CDK_DEFAULT_REGION", region);
    }
    if let Some(account) = opts.account.as_deref().filter(|a| !a.is_empty()) {
        cmd.env("CDK_DEFAULT_ACCOUNT", account);
    }
    let context_dir = if context_json.len() > CONTEXT_OVERFLOW_LIMIT {
        let dir = fresh_dir("cdkd-flow-context")
            .map_err(|e| spawn_error(format!("cannot create a context directory: {e}")))?;
        let file = dir.join("context.json");
        std::fs::write(&file, &context_json)
            .map_err(|e| spawn_error(format!("cannot write {}: {e}", file.display())))?;
        cmd.env("CONTEXT_OVERFLOW_LOCATION_ENV", &file);
        Some(dir)
    } else {
        cmd.env("CDK_CONTEXT_JSON", &context_json);
        None
    };
    let result = async {
        let mut child = cmd.spawn().map_err(|e| spawn_error(e.to_string()))?;
        let echo = opts.echo_stderr;
        let (out_tail, err_tail, status) = tokio::join!(
            collect_lines(child.stdout.take(), |l| tracing::debug!("[app stdout] {l}")),
            collect_lines(child.stderr.take(), move |l| {
                if echo {
                    // A closed stderr is no reason to stop the synth.
                    let _ = writeln!(std::io::stderr(), "{l}");
                }
            }),
            child.wait(),
        );
        let status = status.map_err(|e| spawn_error(e.to_string()))?;
        if status.success() {
            return Ok(());
        }
        // stderr is where a CDK app reports; stdout only when stderr said nothing.
        let tail = if err_tail.is_empty() {
            out_tail
        } else {
            err_tail
        };
        Err(SourceError::AppFailed {
            command: opts.command.clone(),
            status: describe_status(status),
            tail: tail.into_iter().collect(),
        })
    }
    .await;
    if let Some(dir) = context_dir {
        let _ = std::fs::remove_dir_all(dir);
    }
    result
}

/// `--app CMD`: synthesizes into a fresh temporary directory and reads it as a cloud
/// assembly. A command naming an existing directory is that assembly (as the CDK CLI
/// reads it). The directory is removed once read; it is kept, and named, when reading it
/// fails.
pub async fn synthesize(
    opts: &AppOptions,
    stack: Option<&str>,
) -> Result<TemplateSet, SourceError> {
    let as_dir = opts.cwd.join(opts.command.trim());
    if !opts.command.trim().is_empty() && as_dir.is_dir() {
        return read_cloud_assembly(&as_dir, stack);
    }
    let outdir = fresh_dir("cdkd-flow-synth").map_err(|e| SourceError::AppSpawn {
        command: opts.command.clone(),
        cause: format!("cannot create the output directory: {e}"),
    })?;
    if let Err(e) = run_app(opts, &outdir).await {
        let _ = std::fs::remove_dir_all(&outdir);
        return Err(e);
    }
    match missing_context(&outdir).and_then(|()| read_cloud_assembly(&outdir, stack)) {
        Ok(set) => {
            let _ = std::fs::remove_dir_all(&outdir);
            Ok(set)
        }
        Err(e) => Err(SourceError::Synthesized {
            source: Box::new(e),
            kept: outdir,
        }),
    }
}

/// Refuses an assembly whose manifest lists context the app could not look up itself.
fn missing_context(dir: &Path) -> Result<(), SourceError> {
    let (_, m) = read_manifest(dir)?;
    let keys: Vec<String> = m
        .get("missing")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|e| e.get("key").and_then(Value::as_str))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    if keys.is_empty() {
        Ok(())
    } else {
        Err(SourceError::MissingContext {
            keys: keys.join(", "),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CliError;
    use crate::export_source::read::read_templates;
    use crate::export_source::test_support::*;
    use crate::export_source::types::TemplateSource;
    use serde_json::json;

    fn app(command: String, cwd: &Path) -> AppOptions {
        AppOptions {
            command,
            cwd: cwd.to_path_buf(),
            user_config: None,
            context: Map::new(),
            region: Some("eu-west-1".into()),
            account: Some("111122223333".into()),
            echo_stderr: false,
        }
    }

    fn sh_quote(p: &Path) -> String {
        format!("'{}'", p.to_string_lossy().replace('\'', "'\\''"))
    }

    #[tokio::test]
    async fn export_source_app_writes_the_assembly_into_cdk_outdir() {
        let cwd = Scratch::new();
        let fixture = fixtures().join("nested.out");
        let cmd = format!(
            "cp -R {}/. \"$CDK_OUTDIR\" && printf '%s' \"$CDK_OUTDIR\" > outdir.txt",
            sh_quote(&fixture)
        );
        let set = read_templates(&TemplateSource::App(app(cmd, cwd.path())), Some(ROOT))
            .await
            .expect("synth");
        let outdir =
            PathBuf::from(std::fs::read_to_string(cwd.0.join("outdir.txt")).expect("outdir"));
        assert_nested_fixture(&set, &outdir);
        // The fresh directory is removed once read.
        assert!(!outdir.exists(), "{}", outdir.display());
    }

    #[tokio::test]
    async fn export_source_app_gets_the_environment_cdkd_sets() {
        let cwd = Scratch::new();
        cwd.write("cdk.json", r#"{"app": "x", "context": {"a": "cdk.json", "b": "cdk.json", "@aws-cdk/core:flag": true}}"#);
        cwd.write(
            "cdk.context.json",
            r#"{"b": "cdk.context.json", "c": "cdk.context.json"}"#,
        );
        let user = cwd.write(
            "user.cdk.json",
            r#"{"context": {"a": "user", "u": "user"}}"#,
        );
        let fixture = fixtures().join("nested.out");
        let cmd = format!(
            "cp -R {}/. \"$CDK_OUTDIR\" && printf '%s' \"$CDK_CONTEXT_JSON\" > ctx.json && printf '%s %s %s' \"$CDK_DEFAULT_REGION\" \"$CDK_DEFAULT_ACCOUNT\" \"$CDK_CLI_ASM_VERSION\" > env.txt",
            sh_quote(&fixture)
        );
        let mut opts = app(cmd, cwd.path());
        opts.user_config = Some(user);
        opts.context.insert("c".into(), json!("cli"));
        synthesize(&opts, Some(ROOT)).await.expect("synth");
        let ctx: Value =
            serde_json::from_slice(&std::fs::read(cwd.0.join("ctx.json")).expect("ctx"))
                .expect("json");
        assert_eq!(ctx["a"], json!("cdk.json"));
        assert_eq!(ctx["b"], json!("cdk.context.json"));
        assert_eq!(ctx["c"], json!("cli"));
        assert_eq!(ctx["u"], json!("user"));
        assert_eq!(ctx["@aws-cdk/core:flag"], json!(true));
        assert_eq!(ctx["aws:cdk:enable-path-metadata"], json!(true));
        assert_eq!(ctx["aws:cdk:bundling-stacks"], json!(["**"]));
        assert_eq!(
            std::fs::read_to_string(cwd.0.join("env.txt")).expect("env"),
            "eu-west-1 111122223333 38.0.0"
        );
    }

    #[tokio::test]
    async fn export_source_failing_app_reports_its_status_and_last_lines() {
        let cwd = Scratch::new();
        let cmd =
            "echo out-line; for i in $(seq 1 30); do echo \"err $i\" >&2; done; exit 3".to_string();
        let e = synthesize(&app(cmd, cwd.path()), Some(ROOT))
            .await
            .expect_err("fails");
        match &e {
            SourceError::AppFailed { status, tail, .. } => {
                assert_eq!(status, "exit status 3");
                assert_eq!(tail.len(), APP_TAIL_LINES);
                assert_eq!(tail.first().map(String::as_str), Some("err 11"));
                assert_eq!(tail.last().map(String::as_str), Some("err 30"));
            }
            other => panic!("{other:?}"),
        }
        assert!(e.to_string().contains("err 30"), "{e}");
        // Nothing on stderr: stdout's last lines are reported.
        let e = synthesize(&app("echo only-stdout; exit 1".into(), cwd.path()), None)
            .await
            .expect_err("fails");
        assert!(
            e.to_string().contains("only-stdout") && e.to_string().contains("exit status 1"),
            "{e}"
        );
        assert!(matches!(CliError::from(e), CliError::Refused(_)));
    }

    #[tokio::test]
    async fn export_source_app_writing_no_assembly_is_refused_and_its_directory_kept() {
        let cwd = Scratch::new();
        let e = synthesize(&app("true".into(), cwd.path()), Some(ROOT))
            .await
            .expect_err("empty");
        match e {
            SourceError::Synthesized { source, kept } => {
                assert!(
                    matches!(*source, SourceError::NoManifest { .. }),
                    "{source}"
                );
                assert!(kept.is_dir());
                let _ = std::fs::remove_dir_all(kept);
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn export_source_app_needing_context_lookups_is_refused() {
        let cwd = Scratch::new();
        let cmd = r#"printf '%s' '{"version":"38.0.1","artifacts":{},"missing":[{"key":"vpc-provider:account=1:filter.isDefault=true","provider":"vpc-provider","props":{}}]}' > "$CDK_OUTDIR/manifest.json""#;
        let e = synthesize(&app(cmd.into(), cwd.path()), None)
            .await
            .expect_err("missing");
        match e {
            SourceError::Synthesized { source, kept } => {
                assert!(
                    source.to_string().contains("vpc-provider:account=1"),
                    "{source}"
                );
                assert!(matches!(*source, SourceError::MissingContext { .. }));
                let _ = std::fs::remove_dir_all(kept);
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn export_source_app_naming_a_directory_reads_it_as_the_assembly() {
        let dir = fixtures().join("nested.out");
        let opts = app(dir.to_string_lossy().into_owned(), Path::new("/"));
        let set = synthesize(&opts, Some(ROOT)).await.expect("directory");
        assert_nested_fixture(&set, &dir);
    }

    #[test]
    fn export_source_app_js_entry_point_runs_under_node() {
        assert_eq!(app_command_line(" bin/app.js --x "), "node bin/app.js --x");
        assert_eq!(
            app_command_line("npx ts-node bin/app.ts"),
            "npx ts-node bin/app.ts"
        );
    }
}
