// The main window: a toolbar (Open scenario, Plan, Cancel), a progress bar,
// the candidate table, the Pareto chart and the recommendation's reasons.
// Planning runs in a PlanWorker on its own thread; the widgets only connect
// signals to the models.
#pragma once

#include <QMainWindow>
#include <QThread>
#include <memory>

#include "gui/models/candidate_table_model.h"
#include "gui/models/pareto_model.h"
#include "gui/models/plan_worker.h"
#include "gui/models/scenario_document.h"

class QAction;
class QChartView;
class QLabel;
class QProgressBar;
class QScatterSeries;
class QSortFilterProxyModel;
class QTableView;
class QTextEdit;

namespace trainsim::gui {

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  bool openScenario(const QString& path);  // false: a message is shown in the status line

  // For the tests.
  QAction* planAction() const { return plan_action_; }
  QAction* cancelAction() const { return cancel_action_; }
  QTableView* tableView() const { return table_; }
  QChartView* chartView() const { return chart_view_; }
  QScatterSeries* frontSeries() const { return front_series_; }
  QScatterSeries* optionsSeries() const { return options_series_; }
  QSortFilterProxyModel* proxy() const { return proxy_; }
  CandidateTableModel* candidates() const { return candidates_; }
  ParetoModel* pareto() const { return pareto_; }
  QTextEdit* reasons() const { return reasons_; }
  QString statusText() const;
  bool planning() const { return planning_; }

 public slots:
  void startPlan();
  void cancelPlan();
  // Selects the table row of a chart point (what clicking the point does).
  void selectPoint(trainsim::gui::ParetoModel::Series series, int index);

 signals:
  void planRequested(trainsim::Scenario scenario, std::shared_ptr<const trainsim::Catalog> catalog);
  void planShown();
  void planFailed(QString message);

 private:
  void openDialog();
  void onFinished(std::shared_ptr<const trainsim::planner::Plan> plan);
  void onFailed(const QString& message);
  void rebuildChart();
  void onTableSelection();
  void setPlanning(bool on);
  void showStatus(const QString& text);

  std::shared_ptr<const Catalog> catalog_;
  ScenarioDocument* document_;
  CandidateTableModel* candidates_;
  ParetoModel* pareto_;
  QSortFilterProxyModel* proxy_;
  QThread thread_;
  PlanWorker* worker_;
  bool planning_ = false;

  QAction *open_action_, *plan_action_, *cancel_action_;
  QProgressBar* progress_;
  QLabel* status_;
  QTableView* table_;
  QChartView* chart_view_;
  QScatterSeries *front_series_, *options_series_;
  QTextEdit* reasons_;
};

}  // namespace trainsim::gui
