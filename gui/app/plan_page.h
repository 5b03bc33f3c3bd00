// The plan view: the candidate table, the Pareto chart of time against cost
// (clicking a point selects its row, selecting a row highlights its points)
// and the recommendation's reasons.
#pragma once

#include <QWidget>
#include <memory>
#include <vector>

#include "gui/models/candidate_table_model.h"
#include "gui/models/pareto_model.h"
#include "gui/models/planned.h"

class QChartView;
class QLineSeries;
class QScatterSeries;
class QSortFilterProxyModel;
class QTableView;
class QTextEdit;

namespace trainsim::gui {

class PlanPage : public QWidget {
  Q_OBJECT

 public:
  explicit PlanPage(QWidget* parent = nullptr);

  // For the tests.
  QTableView* tableView() const { return table_; }
  QChartView* chartView() const { return chart_view_; }
  QScatterSeries* frontSeries() const { return front_series_; }
  QScatterSeries* optionsSeries() const { return options_series_; }
  // One per front point: its P10-P90 of hours and of cost, a cross through the point.
  const std::vector<QLineSeries*>& errorBars() const { return bars_; }
  QSortFilterProxyModel* proxy() const { return proxy_; }
  CandidateTableModel* candidates() const { return candidates_; }
  ParetoModel* pareto() const { return pareto_; }
  QTextEdit* reasons() const { return reasons_; }
  // The selected candidate (Plan::confirmed index); -1 when none.
  int selectedCandidate() const;

 public slots:
  // Shows a plan (null: clears the page) and selects its recommendation.
  void setPlanned(std::shared_ptr<const trainsim::gui::PlannedScenario> planned);
  // Selects the table row of a chart point (what clicking the point does).
  void selectPoint(trainsim::gui::ParetoModel::Series series, int index);

 signals:
  // The selection changed: a Plan::confirmed index, -1 when none.
  void candidateSelected(int confirmed);

 private:
  void makeTable();
  void makeChart();
  void connectParts();
  void rebuildChart();
  void onTableSelection();

  CandidateTableModel* candidates_;
  ParetoModel* pareto_;
  QSortFilterProxyModel* proxy_;
  QTableView* table_;
  QChartView* chart_view_;
  QScatterSeries *front_series_, *options_series_;
  std::vector<QLineSeries*> bars_;
  QTextEdit* reasons_;
};

}  // namespace trainsim::gui
