#include "gui/app/scenario_page.h"

#include <QAction>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QStyle>
#include <QTabWidget>
#include <QTextBlock>
#include <QToolBar>
#include <QVBoxLayout>

#include "core/model_zoo.h"
#include "gui/app/confirm_discard.h"

namespace trainsim::gui {

namespace {

constexpr int kPauseMs = 300;      // validation waits this long after the last edit
constexpr int kEditorWidth = 230;  // line edits and combo boxes
const QString kCustomModel = QStringLiteral("__custom__");
const QString kLayerListModel = QStringLiteral("__layer_list__");
constexpr int kTransientRole = Qt::UserRole + 1;  // a combo item that shows an odd value
const QString kRed = QStringLiteral("#c62828");
const QString kGreen = QStringLiteral("#2e7d32");

QString ParamsText(const ModelSpec& m) {
  const double p = m.published_params > 0 ? m.published_params : ParameterCount(m);
  return p >= 1e9 ? QStringLiteral("%1 B params").arg(p / 1e9, 0, 'f', 1)
                  : QStringLiteral("%1 M params").arg(p / 1e6, 0, 'f', 1);
}

// A preset's value of a dimension field ("model.layers"), for the placeholder.
int PresetDimension(const ModelSpec& m, const QString& path) {
  static const std::pair<const char*, int ModelSpec::*> kDimensions[] = {
      {"model.layers", &ModelSpec::layers},
      {"model.hidden", &ModelSpec::hidden},
      {"model.heads", &ModelSpec::heads},
      {"model.kv_heads", &ModelSpec::kv_heads},
      {"model.ffn_hidden", &ModelSpec::ffn_hidden},
      {"model.seq_len", &ModelSpec::seq_len},
      {"model.vocab", &ModelSpec::vocab}};
  for (const auto& [name, member] : kDimensions) {
    if (path == QLatin1String(name)) return m.*member;
  }
  return 0;
}

bool IsDimensionField(const QString& path) {
  return path.startsWith(QLatin1String("model.")) && path != QLatin1String("model.mlp") &&
         path != QLatin1String("model.bias");
}

void RemoveTransientItems(QComboBox* combo) {
  for (int i = combo->count() - 1; i >= 0; --i)
    if (combo->itemData(i, kTransientRole).toBool()) combo->removeItem(i);
}

void Repolish(QWidget* w) {
  w->style()->unpolish(w);
  w->style()->polish(w);
  w->update();
}

}  // namespace

ScenarioPage::ScenarioPage(ScenarioDocument* document, std::shared_ptr<const Catalog> catalog,
                           QWidget* parent)
    : QWidget(parent),
      document_(document),
      catalog_(std::move(catalog)),
      picker_(new InstancePickerModel(this)) {
  picker_->setCatalog(catalog_.get());

  auto* bar = new QToolBar;
  new_action_ = bar->addAction(QStringLiteral("New"));
  save_action_ = bar->addAction(QStringLiteral("Save"));
  save_action_->setShortcut(QKeySequence::Save);
  save_as_action_ = bar->addAction(QStringLiteral("Save as…"));
  save_as_action_->setShortcut(QKeySequence::SaveAs);
  status_ = new QLabel;
  status_->setObjectName(QStringLiteral("scenarioStatus"));
  status_->setTextFormat(Qt::RichText);
  status_->setWordWrap(true);
  status_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);

  form_view_ = new QScrollArea;
  form_view_->setWidgetResizable(true);
  form_view_->setWidget(buildForm());
  json_ = new QPlainTextEdit;
  json_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  json_->setLineWrapMode(QPlainTextEdit::NoWrap);
  views_ = new QTabWidget;
  views_->addTab(form_view_, QStringLiteral("Form"));
  views_->addTab(json_, QStringLiteral("JSON"));

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* top = new QHBoxLayout;  // the status wraps onto more lines when it is long
  top->addWidget(bar, 0, Qt::AlignTop);
  top->addWidget(status_, 1);
  layout->addLayout(top);
  layout->addWidget(views_, 1);
  setStyleSheet(QStringLiteral("*[fieldError=\"true\"] { border: 2px solid %1; }").arg(kRed));

  pause_.setSingleShot(true);
  pause_.setInterval(kPauseMs);
  connect(&pause_, &QTimer::timeout, this, &ScenarioPage::validateNow);
  connect(json_, &QPlainTextEdit::textChanged, this, &ScenarioPage::onJsonEdited);
  connect(document_, &ScenarioDocument::textChanged, this, &ScenarioPage::onDocumentChanged);
  connect(document_, &ScenarioDocument::parsed, this, &ScenarioPage::onParsed);
  // Leaving the JSON tab before the pause: the form catches up at once.
  connect(views_, &QTabWidget::currentChanged, this, [this] {
    if (json_dirty_) validateNow();
  });
  connect(picker_, &InstancePickerModel::checkedChanged, this, [this] {
    if (!form_.ok()) return;
    form_.setFieldList(QStringLiteral("search.instances"), picker_->checked());
    commitForm();
  });
  connect(status_, &QLabel::linkActivated, this, &ScenarioPage::onStatusLink);
  connect(new_action_, &QAction::triggered, this, &ScenarioPage::newScenario);
  connect(save_action_, &QAction::triggered, this, [this] { saveDialog(false); });
  connect(save_as_action_, &QAction::triggered, this, [this] { saveDialog(true); });

  onDocumentChanged();
}

// ---- the form's widgets -----------------------------------------------------------------------

QWidget* ScenarioPage::buildForm() {
  auto* form = new QWidget;
  auto* columns = new QHBoxLayout(form);
  auto* left = new QVBoxLayout;
  auto* right = new QVBoxLayout;
  for (const char* s : {"Model", "Training"}) left->addWidget(buildSection(QString::fromLatin1(s)));
  for (const char* s : {"Search", "Cluster", "Parallel"})
    right->addWidget(buildSection(QString::fromLatin1(s)));
  left->addStretch(1);
  right->addStretch(1);
  columns->addLayout(left, 1);
  columns->addLayout(right, 1);
  return form;
}

QWidget* ScenarioPage::buildSection(const QString& section) {
  auto* box = new QGroupBox(section);
  auto* rows = new QFormLayout(box);
  rows->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  for (const FormField& spec : ScenarioFormFields()) {
    if (spec.section != section) continue;
    Field f = makeField(spec);
    auto* row = new QWidget;
    auto* line = new QHBoxLayout(row);
    line->setContentsMargins(0, 0, 0, 0);
    line->addWidget(f.editor, 0, Qt::AlignTop | Qt::AlignLeft);
    line->addWidget(f.error, 1);
    if (spec.kind == FieldKind::kInstanceList ||
        spec.kind == FieldKind::kChoiceList)  // what an empty list means, in sight
      rows->addRow(
          new QLabel(QStringLiteral("%1<br><small>(%2)</small>").arg(spec.label, spec.hint)), row);
    else
      rows->addRow(spec.label, row);
    fields_.insert(spec.path, f);
  }
  return box;
}

ScenarioPage::Field ScenarioPage::makeField(const FormField& spec) {
  Field f;
  f.spec = &spec;
  const QString path = spec.path;
  switch (spec.kind) {
    case FieldKind::kInteger:
    case FieldKind::kNumber:
    case FieldKind::kText:
      f.line = new QLineEdit;
      f.line->setPlaceholderText(spec.hint);
      f.line->setFixedWidth(kEditorWidth);
      connect(f.line, &QLineEdit::textEdited, this, [this, path] { onFieldEdited(path); });
      f.editor = f.line;
      break;
    case FieldKind::kChoice:
    case FieldKind::kBool: {
      f.combo = new QComboBox;
      f.combo->addItem(QStringLiteral("(default: %1)").arg(spec.hint), QString());
      const QStringList choices = spec.kind == FieldKind::kBool
                                      ? QStringList{QStringLiteral("true"), QStringLiteral("false")}
                                      : spec.choices;
      for (const QString& c : choices) f.combo->addItem(c, c);
      connect(f.combo, &QComboBox::activated, this, [this, path] { onFieldEdited(path); });
      break;
    }
    case FieldKind::kNumberOrText:
    case FieldKind::kInstance: {
      f.combo = new QComboBox;
      f.combo->setEditable(true);
      f.combo->setInsertPolicy(QComboBox::NoInsert);
      if (spec.kind == FieldKind::kInstance && catalog_) {
        for (const std::string& n : catalog_->Names()) f.combo->addItem(QString::fromStdString(n));
      } else {
        f.combo->addItems(spec.choices);
      }
      f.combo->lineEdit()->setPlaceholderText(spec.hint);
      if (spec.kind == FieldKind::kNumberOrText)
        f.combo->setToolTip(
            QStringLiteral("min-cost, min-time, or the weight of time against "
                           "cost in [0, 1] (1 = time only)"));
      connect(f.combo->lineEdit(), &QLineEdit::textEdited, this,
              [this, path] { onFieldEdited(path); });
      connect(f.combo, &QComboBox::activated, this, [this, path] { onFieldEdited(path); });
      break;
    }
    case FieldKind::kModel:
      f.combo = new QComboBox;
      f.combo->addItem(QStringLiteral("Custom dimensions"), kCustomModel);
      for (const ModelSpec& m : ModelZoo()) {
        const QString name = QString::fromStdString(m.name);
        f.combo->addItem(QStringLiteral("%1  (%2)").arg(name, ParamsText(m)), name);
      }
      connect(f.combo, &QComboBox::activated, this, &ScenarioPage::onModelChosen);
      break;
    case FieldKind::kInstanceList: {
      f.list = new QListView;
      f.list->setModel(picker_);
      f.list->setMinimumSize(380, 140);
      f.list->setMaximumHeight(180);
      f.list->setToolTip(spec.hint);
      f.list->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
      f.editor = f.list;
      break;
    }
    case FieldKind::kChoiceList: {
      f.choices = new QListWidget;
      for (const QString& c : spec.choices) {
        auto* item = new QListWidgetItem(c, f.choices);
        item->setFlags(Qt::ItemIsUserCheckable | Qt::ItemIsEnabled);
        item->setCheckState(Qt::Unchecked);
      }
      f.choices->setMinimumWidth(kEditorWidth);
      f.choices->setMaximumHeight(f.choices->sizeHintForRow(0) * (spec.choices.size() + 1));
      f.choices->setToolTip(spec.hint);
      connect(f.choices, &QListWidget::itemChanged, this, [this, path] {
        if (!form_.ok() || refreshing_) return;
        form_.setFieldList(path, checkedChoices(fields_[path]));
        commitForm();
      });
      f.editor = f.choices;
      break;
    }
  }
  if (f.combo) {
    f.combo->setFixedWidth(kEditorWidth);
    f.combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    f.editor = f.combo;
  }
  f.editor->setObjectName(path);
  f.error = new QLabel;
  f.error->setObjectName(QStringLiteral("error:") + path);
  f.error->setWordWrap(true);
  f.error->setStyleSheet(QStringLiteral("color: %1;").arg(kRed));
  f.error->setTextInteractionFlags(Qt::TextSelectableByMouse);
  f.error->hide();
  return f;
}

QWidget* ScenarioPage::editor(const QString& path) const {
  auto it = fields_.find(path);
  return it == fields_.end() ? nullptr : it->editor;
}

QLabel* ScenarioPage::errorLabel(const QString& path) const {
  auto it = fields_.find(path);
  return it == fields_.end() ? nullptr : it->error;
}

QStringList ScenarioPage::checkedChoices(const Field& f) {
  QStringList out;
  for (int i = 0; i < f.choices->count(); ++i)
    if (f.choices->item(i)->checkState() == Qt::Checked) out << f.choices->item(i)->text();
  return out;
}

QString ScenarioPage::widgetText(const Field& f) const {
  if (f.line) return f.line->text();
  if (f.combo && f.combo->isEditable()) return f.combo->currentText();
  if (f.combo) return f.combo->currentData().toString();
  return QString();
}

void ScenarioPage::setWidgetText(Field& f, const QString& text) {
  if (f.line) {
    if (f.line->text() != text) f.line->setText(text);
    return;
  }
  if (!f.combo) return;
  if (f.combo->isEditable()) {
    if (f.combo->currentText() == text) return;
    f.combo->setCurrentIndex(f.combo->findText(text));
    f.combo->setEditText(text);
    return;
  }
  RemoveTransientItems(f.combo);
  int at = f.combo->findData(text);
  if (at < 0) {  // a value the choices lack: shown as it is, and the parser says why
    f.combo->addItem(text, text);
    at = f.combo->count() - 1;
    f.combo->setItemData(at, true, kTransientRole);
  }
  f.combo->setCurrentIndex(at);
}

// ---- keeping the two views and the document in step -------------------------------------------

void ScenarioPage::onDocumentChanged() {
  if (writing_) return;  // our own edit
  // Loaded, new, or changed elsewhere: both views follow at once.
  json_dirty_ = false;
  pause_.stop();
  setJsonText(document_->text());
  form_.setText(document_->text());
  refreshForm();
  if (!document_->text().isEmpty()) {
    validateNow();
  } else {
    clearErrors();
    setStatus(QStringLiteral("Open a scenario file, or start a New one."), QString());
  }
}

void ScenarioPage::onJsonEdited() {
  if (setting_json_) return;
  writing_ = true;
  document_->setText(json_->toPlainText());
  writing_ = false;
  json_dirty_ = true;
  pause_.start();
}

void ScenarioPage::onFieldEdited(const QString& path) {
  if (!form_.ok()) return;
  form_.setFieldText(path, widgetText(fields_[path]));
  commitForm();
}

void ScenarioPage::onModelChosen() {
  if (!form_.ok()) return;
  const QString chosen = fields_[QStringLiteral("model")].combo->currentData().toString();
  if (chosen == kLayerListModel || chosen == form_.modelPreset()) return;
  if (chosen == kCustomModel)
    form_.setCustomModel();
  else
    form_.setModelPreset(chosen);
  commitForm();
  refreshForm();  // the dimensions follow the model
}

void ScenarioPage::commitForm() {
  const QString text = form_.text();
  setJsonText(text);
  writing_ = true;
  document_->setText(text);
  writing_ = false;
  json_dirty_ = false;
  pause_.start();
}

void ScenarioPage::setJsonText(const QString& text) {
  if (json_->toPlainText() == text) return;
  setting_json_ = true;
  json_->setPlainText(text);
  setting_json_ = false;
}

void ScenarioPage::refreshForm() {
  form_view_->widget()->setEnabled(form_.ok());
  if (!form_.ok()) return;  // the form keeps its last values until the JSON reads again
  for (auto it = fields_.begin(); it != fields_.end(); ++it) {
    const QString& path = it.key();
    if (it->spec->kind == FieldKind::kChoiceList) {
      const QStringList checked = form_.fieldList(path);
      refreshing_ = true;
      for (int i = 0; i < it->choices->count(); ++i) {
        QListWidgetItem* item = it->choices->item(i);
        item->setCheckState(checked.contains(item->text()) ? Qt::Checked : Qt::Unchecked);
      }
      refreshing_ = false;
    } else if (it->spec->kind == FieldKind::kInstanceList) {
      picker_->setChecked(form_.fieldList(path));
      if (!picker_->checked().isEmpty())  // the first checked type in sight
        it->list->scrollTo(picker_->index(picker_->rowOf(picker_->checked().first())),
                           QAbstractItemView::PositionAtTop);
    } else if (it->spec->kind != FieldKind::kModel)
      setWidgetText(*it, form_.fieldText(path));
  }
  refreshModel();
}

void ScenarioPage::refreshModel() {
  QComboBox* combo = fields_[QStringLiteral("model")].combo;
  RemoveTransientItems(combo);
  auto transient = [combo](const QString& label, const QString& data) {
    combo->addItem(label, data);
    combo->setItemData(combo->count() - 1, true, kTransientRole);
    return combo->count() - 1;
  };
  const ScenarioForm::ModelForm form = form_.modelForm();
  const QString preset = form_.modelPreset();
  std::optional<ModelSpec> spec = FindModel(preset.toStdString());
  int at = -1;
  switch (form) {
    case ScenarioForm::ModelForm::kPreset:
    case ScenarioForm::ModelForm::kOverrides:
      at = combo->findData(preset);
      if (at < 0) at = transient(QStringLiteral("%1 (not a preset)").arg(preset), preset);
      break;
    case ScenarioForm::ModelForm::kCustom:
      at = combo->findData(kCustomModel);
      break;
    case ScenarioForm::ModelForm::kLayerList:
      at = transient(QStringLiteral("Layer list (edit it in the JSON tab)"), kLayerListModel);
      break;
    case ScenarioForm::ModelForm::kAbsent:
    case ScenarioForm::ModelForm::kOther:
      at = transient(QStringLiteral("(choose a model)"), QString());
      break;
  }
  combo->setCurrentIndex(at);
  const bool custom = form == ScenarioForm::ModelForm::kCustom;
  const bool transformer_preset = spec && spec->kind == ModelKind::kTransformer;
  for (auto it = fields_.begin(); it != fields_.end(); ++it) {
    if (!it.key().startsWith(QLatin1String("model."))) continue;
    if (IsDimensionField(it.key())) {
      it->editor->setEnabled(custom || transformer_preset);
      it->line->setPlaceholderText(
          transformer_preset ? QString::number(PresetDimension(*spec, it.key())) : it->spec->hint);
    } else {
      it->editor->setEnabled(custom);  // presets take dimension overrides only
    }
  }
}

// ---- validation -------------------------------------------------------------------------------

void ScenarioPage::validateNow() {
  pause_.stop();
  if (json_dirty_) {  // the JSON was edited: the form reads it again
    json_dirty_ = false;
    form_.setText(document_->text());
    refreshForm();
  }
  if (!catalog_) {
    clearErrors();
    setStatus(QStringLiteral("No instance catalog: the scenario cannot be checked."), kRed);
    return;
  }
  document_->parse(*catalog_);  // parsed(bool) -> onParsed
}

void ScenarioPage::onParsed(bool ok) {
  clearErrors();
  if (ok) {
    const Scenario& s = document_->scenario()->scenario;
    highlightJsonLine(0);
    setStatus(QStringLiteral("✓ Valid: %1 — %2 on %3 × %4 (%5 GPUs)")
                  .arg(QString::fromStdString(s.name).toHtmlEscaped(),
                       QString::fromStdString(s.model.name).toHtmlEscaped())
                  .arg(s.cluster.nodes)
                  .arg(QString::fromStdString(s.cluster.instance).toHtmlEscaped())
                  .arg(s.total_gpus()),
              kGreen);
    emit validated(true);
    return;
  }
  const ScenarioError& e = document_->error();
  highlightJsonLine(e.line);
  const QString at = e.line > 0 ? QStringLiteral("%1:%2").arg(e.line).arg(e.column) : QString();
  const QString link =
      e.line > 0
          ? QStringLiteral(" <a href=\"json:%1:%2\">show in the JSON</a>").arg(e.line).arg(e.column)
          : QString();
  const QString field = FormFieldForError(e.field);
  if (!field.isEmpty() && form_.ok()) {
    showFieldError(field, e.detail);
    setStatus(QStringLiteral("Error beside <a href=\"field:%1\">%2</a> (JSON line:column %3).%4")
                  .arg(field, fields_[field].spec->label.toHtmlEscaped(), at, link),
              kRed);
  } else {
    setStatus((at.isEmpty() ? QString() : QStringLiteral("<b>%1</b>: ").arg(at)) +
                  e.detail.toHtmlEscaped() + link,
              kRed);
  }
  emit validated(false);
}

void ScenarioPage::showFieldError(const QString& path, const QString& message) {
  Field& f = fields_[path];
  f.error->setText(message);
  f.error->show();
  f.editor->setProperty("fieldError", true);
  Repolish(f.editor);
  marked_ = path;
}

void ScenarioPage::clearErrors() {
  if (marked_.isEmpty()) return;
  Field& f = fields_[marked_];
  f.error->clear();
  f.error->hide();
  f.editor->setProperty("fieldError", false);
  Repolish(f.editor);
  marked_.clear();
}

void ScenarioPage::highlightJsonLine(int line) {
  QList<QTextEdit::ExtraSelection> marks;
  const QTextBlock block = json_->document()->findBlockByNumber(line - 1);
  if (line > 0 && block.isValid()) {
    QTextEdit::ExtraSelection mark;
    mark.cursor = QTextCursor(block);
    mark.format.setBackground(QColor(255, 224, 224));
    mark.format.setProperty(QTextFormat::FullWidthSelection, true);
    marks << mark;
  }
  json_->setExtraSelections(marks);
}

void ScenarioPage::showJsonAt(int line, int column) {
  views_->setCurrentWidget(json_);
  const QTextBlock block = json_->document()->findBlockByNumber(std::max(0, line - 1));
  if (!block.isValid()) return;
  QTextCursor cursor(block);
  cursor.movePosition(QTextCursor::Right, QTextCursor::MoveAnchor,
                      std::min(std::max(0, column - 1), block.length() - 1));
  json_->setTextCursor(cursor);
  json_->centerCursor();
  json_->setFocus();
}

void ScenarioPage::onStatusLink(const QString& link) {
  const QStringList parts = link.split(QLatin1Char(':'));
  if (parts.size() == 3 && parts[0] == QLatin1String("json")) {  // json:LINE:COLUMN
    showJsonAt(parts[1].toInt(), parts[2].toInt());
  } else if (parts.size() == 2 && parts[0] == QLatin1String("field") && editor(parts[1])) {
    views_->setCurrentWidget(form_view_);
    form_view_->ensureWidgetVisible(editor(parts[1]));
    editor(parts[1])->setFocus();
  }
}

void ScenarioPage::setStatus(const QString& html, const QString& color) {
  status_->setText(color.isEmpty()
                       ? html
                       : QStringLiteral("<span style=\"color:%1\">%2</span>").arg(color, html));
}

// ---- files ------------------------------------------------------------------------------------

void ScenarioPage::newScenario() {
  if (!ConfirmDiscard(this, *document_)) return;
  document_->startNew(NewScenarioText());
  views_->setCurrentWidget(form_view_);
}

void ScenarioPage::saveDialog(bool ask) {
  QString path = document_->path();
  if (ask || path.isEmpty()) {
    path = QFileDialog::getSaveFileName(this, QStringLiteral("Save scenario"),
                                        path.isEmpty() ? QStringLiteral("scenario.json") : path,
                                        QStringLiteral("Scenarios (*.json)"));
    if (path.isEmpty()) return;
  }
  saveTo(path);
}

bool ScenarioPage::saveTo(const QString& path) {
  if (!document_->save(path)) {
    setStatus(QStringLiteral("Not saved: ") + document_->error().message.toHtmlEscaped(), kRed);
    return false;
  }
  validateNow();  // cluster.profile is read next to the file: its folder may have changed
  return true;
}

}  // namespace trainsim::gui
