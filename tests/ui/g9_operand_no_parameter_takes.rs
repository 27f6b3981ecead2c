use ais::ais;

ais! {
    /// Summarize the reviews' labels and save the summary.
    program Summary {
        carries {
            task: str = input,
            summary_file: path = input,
            labels: str,
            summary_md: str,
            saved: str,
        }
        #[surface(ACT, artifact)]
        tool save_summary(summary_md: &str, path: &ais::ArtifactPath) -> std::io::Result<String> {
            path.write(summary_md)
        }
        /// Label each review `positive`, `negative` or `neutral`, one per line.
        classify: GEN-RAW(task) -> labels;
        /// Summarize the labels as markdown.
        tally: GEN-RAW(labels) -> summary_md;
        #[allow(unrouted_failure)]
        save: ACT(artifact) save_summary(labels, summary_file) -> saved;
        done: TERMINAL(saved);
        classify -> tally -> save -> done;
    }
}

fn main() {}
