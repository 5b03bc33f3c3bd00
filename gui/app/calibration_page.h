// The Calibration page: runs trainsim-calibrate (backend, quick, output
// file) through a CalibrationRun with its progress and log, and shows a
// hardware profile -- the one just written, or one loaded from a file -- as
// charts of its measured curves against the catalog's figures (dashed), a
// table of the points and a summary of its provenance. Save profile as…
// writes the shown profile's file to another place.
#pragma once

#include <QWidget>
#include <memory>

#include "core/catalog.h"
#include "gui/models/calibration_run.h"
#include "gui/models/loaded_profile.h"
#include "gui/models/profile_curves_model.h"

class QChartView;
class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTableView;
class QTextEdit;

namespace trainsim::gui {

class CalibrationPage : public QWidget {
  Q_OBJECT

 public:
  // `catalog`: the built-in catalog, for the catalog figures (may be null).
  explicit CalibrationPage(std::shared_ptr<const Catalog> catalog, QWidget* parent = nullptr);

  // False: the page's status line says why (the file and the parser's message).
  bool loadProfile(const QString& path);
  bool saveProfileAs(const QString& path);

  // For the tests.
  CalibrationRun* run() const { return run_; }
  ProfileCurvesModel* curves() const { return curves_; }
  QComboBox* backendBox() const { return backend_; }
  QCheckBox* quickBox() const { return quick_; }
  QLineEdit* outputEdit() const { return output_; }
  QPushButton* runButton() const { return run_button_; }
  QPushButton* cancelButton() const { return cancel_button_; }
  QPushButton* useButton() const { return use_button_; }
  QProgressBar* progressBar() const { return progress_; }
  QPlainTextEdit* log() const { return log_; }
  QChartView* gemmChart() const { return gemm_chart_; }
  QChartView* memoryChart() const { return memory_chart_; }
  QChartView* collectiveChart() const { return collective_chart_; }
  QString statusText() const;

 public slots:
  void startRun();
  void cancelRun();

 signals:
  void profileShown(QString path);
  // "Use in scenario": the shown profile's file, for the window to attach.
  void useInScenario(QString path);
  void runEnded();  // after finished or failed, once the page shows the outcome

 private:
  QWidget* makeControls();
  QWidget* makeCharts();
  void loadDialog();
  void saveDialog();
  void chooseOutput();
  void setRunning(bool on);
  void showProfile(std::shared_ptr<const LoadedProfile> profile);
  void showSummary();
  void rebuildCharts();
  void onProgress(int done, int total, const QString& phase);
  void onFinished(const QString& path, int exit_code);
  void onFailed(const QString& message);
  void showStatus(const QString& text);

  std::shared_ptr<const Catalog> catalog_;
  CalibrationRun* run_;
  ProfileCurvesModel* curves_;

  QComboBox* backend_;
  QCheckBox* quick_;
  QLineEdit* output_;
  QPushButton *browse_button_, *run_button_, *cancel_button_, *load_button_, *save_button_,
      *use_button_;
  QProgressBar* progress_;
  QPlainTextEdit* log_;
  QTextEdit* summary_;
  QTableView* table_;
  QChartView *gemm_chart_, *memory_chart_, *collective_chart_;
  QLabel* status_;
};

}  // namespace trainsim::gui
