// The launch page: the bundle for the candidate selected in the plan view
// (default: the recommendation) -- a form for the launch options, MakeBundle's
// message beside it while they are wrong, the files with a preview, and
// "Write bundle…" -- and a local run of that candidate's structure on this
// machine (LocalRunWorker on its own thread) whose measured steps are drawn
// beside the simulator's prediction.
#pragma once

#include <QWidget>
#include <memory>

#include "gui/models/bundle_model.h"
#include "gui/models/local_run_worker.h"
#include "gui/models/planned.h"
#include "gui/models/worker_thread.h"

class QCheckBox;
class QChartView;
class QLabel;
class QLineEdit;
class QLineSeries;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableView;

namespace trainsim::gui {

class LaunchPage : public QWidget {
  Q_OBJECT

 public:
  explicit LaunchPage(QWidget* parent = nullptr);

  // Writes the shown bundle to `dir` (WriteBundle); false: the message is in the status line.
  bool writeBundle(const QString& dir);
  void startLocalRun();
  void cancelLocalRun();

  // For the tests.
  BundleModel* bundle() const { return bundle_; }
  QLineEdit* s3Uri() const { return s3_uri_; }
  QLabel* formError() const { return form_error_; }
  QLabel* status() const { return status_; }
  QLabel* candidateLabel() const { return candidate_; }
  QTableView* fileView() const { return files_; }
  QPlainTextEdit* preview() const { return preview_; }
  QSpinBox* ranks() const { return ranks_; }
  QSpinBox* steps() const { return steps_; }
  QLineEdit* profile() const { return profile_; }
  QLineEdit* runFolder() const { return run_folder_; }
  QPushButton* runButton() const { return run_; }
  QPushButton* cancelButton() const { return cancel_; }
  QProgressBar* progress() const { return progress_; }
  QLineSeries* measuredSeries() const { return measured_; }
  QLineSeries* predictedSeries() const { return predicted_; }
  QLabel* runSummary() const { return summary_; }
  bool running() const { return running_; }
  const std::shared_ptr<const launch::LaunchPlan>& launchPlan() const { return plan_; }

 public slots:
  void setPlanned(std::shared_ptr<const trainsim::gui::PlannedScenario> planned);
  // A Plan::confirmed index (-1: none).
  void setCandidate(int confirmed);

 signals:
  void runRequested(std::shared_ptr<const trainsim::launch::LaunchPlan> plan,
                    trainsim::launch::LocalOptions options,
                    std::shared_ptr<const trainsim::Catalog> catalog);
  void localRunEnded();  // finished or failed

 private:
  QWidget* makeForm();
  QWidget* makeFiles();
  QWidget* makeLocalRun();
  void rebuildPlan();
  void rebuildBundle();
  void showFile();
  void chooseFolder();
  void chooseProfile();
  void setRunning(bool on);
  void onStarting(const QVariant& predicted_step_s, int steps, const QString& command);
  void onStep(int index, double seconds, double loss);
  void onFinished(const std::shared_ptr<const launch::LocalReport>& report);
  void onFailed(const QString& message);
  void fitAxes();

  std::shared_ptr<const PlannedScenario> planned_;
  int confirmed_ = -1;
  std::shared_ptr<const launch::LaunchPlan> plan_;
  BundleModel* bundle_;
  WorkerThread<LocalRunWorker> worker_;  // on its own thread
  bool running_ = false;

  QLabel *candidate_, *form_error_, *warnings_, *status_, *summary_;
  QLineEdit *job_name_, *s3_uri_, *role_arn_, *image_, *profile_, *run_folder_;
  QCheckBox *sagemaker_, *slurm_, *scripts_, *hyperpod_slurm_, *hyperpod_eks_;
  QTableView* files_;
  QPlainTextEdit* preview_;
  QPushButton *write_, *run_, *cancel_;
  QSpinBox *ranks_, *steps_;
  QProgressBar* progress_;
  QChartView* chart_view_;
  QLineSeries *measured_, *predicted_;
};

}  // namespace trainsim::gui
